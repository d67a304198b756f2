import ArgumentParser
import DevtoolsServer
import Foundation
import NodeSupport
import Synchronization
import ZeroMQ

/// Dispatch tokens made from the cluster's CURVE keys, so a developer whose key the cluster admits
/// can dispatch from a devtools page off loopback without anyone handing out a token: the token of a
/// key pair is a digest only its secret key, or the server's, can make (``Curve/agreedDigest``).
/// Revoking the key in the authorized-keys file revokes its token.
enum DevtoolsKeyToken {
    static let label = "zflux devtools dispatch"

    /// The token of the key pair whose secret is `secretKey`, for the cluster whose server key's
    /// public half is `serverPublicKey` (or, from the server's side, the reverse).
    static func token(secretKey: String, peerPublicKey: String) -> String? {
        Curve.agreedDigest(of: label, secretKey: secretKey, peerPublicKey: peerPublicKey).map { digest in
            digest.map { String(format: "%02x", $0) }.joined()
        }
    }
}

/// The tokens of every key in the authorized-keys file, made again whenever the file changes
/// (as the ZAP handler reads it again), so a key added or revoked there is a token added or revoked.
final class AuthorizedKeyTokens: Sendable {
    let serverSecretKey: String
    let file: String
    private struct Cache {
        var stamp: [Int] = []
        var tokens: [String] = []
    }
    private let cache = Mutex(Cache())

    init(serverSecretKey: String, file: String) {
        self.serverSecretKey = serverSecretKey
        self.file = file
    }

    /// The tokens of the keys the file lists now (none when it cannot be read).
    func current() -> [String] {
        var info = stat()
        // The file's identity and change time: a rewrite by rename is a new inode, an edit a new time or size.
        let stamp =
            stat(file, &info) == 0 ? [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec] : []
        return cache.withLock { cache in
            if cache.stamp != stamp || stamp.isEmpty {
                cache.stamp = stamp
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                cache.tokens = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty && !$0.hasPrefix("#") && KeyPair.isPublicKey($0) }
                    .compactMap { DevtoolsKeyToken.token(secretKey: serverSecretKey, peerPublicKey: $0) }
            }
            return cache.tokens
        }
    }
}

/// `zflux devtools token`: prints the dispatch token of a key pair.
struct DevtoolsTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print the token your CURVE key gives you to dispatch from a devtools page.",
        discussion: """
            On a cluster with a [security] section, a devtools page served off loopback takes, besides its \
            own token, the token of every key in the authorized-keys file. This prints yours: made from \
            your secret key and the cluster's server public key, so no one has to send it to you, and \
            revoking your key revokes it. Open the page as http://HOST:PORT/#token=TOKEN.

            The key pair is --key-file, else $ZFLUX_KEY, else the cluster's client key; the server's \
            public key is --server-key, else the cluster's (from --run-dir or --config).
            """)

    @Option(help: ArgumentHelp("Your key pair's secret file (made by `keygen`).", valueName: "file"))
    var keyFile: String?
    @Option(help: ArgumentHelp("The cluster's server public key (Z85, 40 characters), or a .pub file holding it.", valueName: "key"))
    var serverKey: String?
    @OptionGroup var runDir: RunDirOptions

    func run() throws {
        let serverPublicKey: String
        if let serverKey {
            let text = (try? String(contentsOfFile: serverKey, encoding: .utf8)) ?? serverKey
            guard let key = text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: KeyPair.isPublicKey)
            else { throw CLIError("--server-key takes a public key (40 Z85 characters) or a .pub file holding one") }
            serverPublicKey = key
        } else {
            guard let security = try runDir.topology().security else {
                throw CLIError("this cluster has no [security] section: its devtools take only their own token (--token-file)")
            }
            serverPublicKey = security.serverPublicKey
        }
        let keyFile = keyFile ?? ProcessInfo.processInfo.environment["ZFLUX_KEY"]
        let pair: KeyPair
        if let keyFile {
            pair = try KeyPair.load(keyFile)
        } else if let security = try runDir.topology().security {
            pair = try KeyPair.load(security.clientKeyFile)
        } else {
            throw CLIError("name your key pair: --key-file FILE (or $ZFLUX_KEY)")
        }
        guard let token = DevtoolsKeyToken.token(secretKey: pair.secretKey, peerPublicKey: serverPublicKey) else {
            throw CLIError("no token can be made from this key pair and server key")
        }
        emitLine(token)
    }
}
