import ArgumentParser
import DevtoolsServer
import Foundation
import NodeSupport
import Synchronization
import ZeroMQ

/// Dispatch tokens made from CURVE keys, so a developer whose key the cluster admits can dispatch
/// from a devtools page off loopback without anyone handing out a token. The devtools have a key
/// pair of their own (`[devtools] key`, `--key`): a developer's token is a digest that only the
/// developer's secret key or the devtools' can make (``Curve/agreedDigest``), over both public keys.
/// The web-facing process holds its own key, never the cluster's server key. Revoking a developer's
/// key in the authorized-keys file revokes their token; a new devtools key pair reissues every token.
enum DevtoolsKeyToken {
    static let label = Array("zflux devtools dispatch v1".utf8)

    /// What the digest covers: the label and both public keys (the devtools' first), so a token names
    /// the two keys it was made for and no other spelling of them.
    static func message(devtoolsPublicKey: String, developerPublicKey: String) -> [UInt8]? {
        guard let devtools = Curve.decode(devtoolsPublicKey), let developer = Curve.decode(developerPublicKey) else { return nil }
        return label + devtools + developer
    }

    /// The developer's side: their key pair and the devtools' public key.
    static func token(developer: KeyPair, devtoolsPublicKey: String) -> String? {
        guard let message = message(devtoolsPublicKey: devtoolsPublicKey, developerPublicKey: developer.publicKey) else { return nil }
        return Curve.agreedDigest(of: message, secretKey: developer.secretKey, peerPublicKey: devtoolsPublicKey).map(hex)
    }

    /// The devtools' side: its key pair and a developer's public key.
    static func token(devtools: KeyPair, developerPublicKey: String) -> String? {
        guard let message = message(devtoolsPublicKey: devtools.publicKey, developerPublicKey: developerPublicKey) else { return nil }
        return Curve.agreedDigest(of: message, secretKey: devtools.secretKey, peerPublicKey: developerPublicKey).map(hex)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The tokens of every key the authorized-keys file lists now. The file is read again at every
/// dispatch (it is small, and a page dispatches at most 20 times a second), so an edit in place is
/// seen as soon as it is written; the tokens are made again only when its bytes changed. A file
/// that cannot be read gives no tokens.
final class AuthorizedKeyTokens: Sendable {
    let devtools: KeyPair
    let file: String
    private struct Cache {
        var bytes: Data?
        var tokens: [DispatchAccess.Holder] = []
    }
    private let cache = Mutex(Cache())

    init(devtools: KeyPair, file: String) {
        self.devtools = devtools
        self.file = file
    }

    func current() -> [DispatchAccess.Holder] {
        guard let bytes = FileManager.default.contents(atPath: file) else { return [] }
        return cache.withLock { cache in
            if cache.bytes != bytes {
                let text = String(decoding: bytes, as: UTF8.self)
                cache.tokens = ZAPHandler.listedKeys(text).filter(KeyPair.isPublicKey)
                    .compactMap { key in
                        DevtoolsKeyToken.token(devtools: devtools, developerPublicKey: key).map {
                            DispatchAccess.Holder(token: $0, name: "key \(key)")
                        }
                    }
                cache.bytes = bytes
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
            When the devtools have a key pair of their own ([devtools] key, or --key) on a cluster with a \
            [security] section, a page served off loopback takes, besides the devtools' own token, the \
            token of every key in the cluster's authorized-keys file. This prints yours, made from your \
            secret key and the devtools' public key: no one has to send it to you, and revoking your key \
            revokes it. Open the page as http://HOST:PORT/#token=TOKEN. Keep it as you keep the key: \
            whoever holds it dispatches from the page until your key is revoked or the devtools get a \
            new key pair.

            The key pair is --key-file, else $ZFLUX_KEY; the devtools' public key is --devtools-key, \
            else the .pub beside the cluster config's [devtools] key (from --run-dir or --config).
            """)

    @Option(help: ArgumentHelp("Your key pair's secret file (made by `keygen`). Default: $ZFLUX_KEY.", valueName: "file"))
    var keyFile: String?
    @Option(
        help: ArgumentHelp(
            "The devtools' public key (Z85, 40 characters), or a .pub file holding it. A key may start with '-': write --devtools-key=KEY.",
            valueName: "key"))
    var devtoolsKey: String?
    @OptionGroup var runDir: RunDirOptions

    func run() throws {
        guard let keyFile = keyFile ?? ProcessInfo.processInfo.environment["ZFLUX_KEY"] else {
            throw CLIError("name your key pair: --key-file FILE (or $ZFLUX_KEY)")
        }
        let developer = try KeyPair.load(keyFile)
        // Read once: needed for the devtools' key unless --devtools-key gives it, else only for the note below.
        let topology = devtoolsKey == nil ? try runDir.topology() : try? runDir.topology()
        let devtoolsPublicKey: String
        if let devtoolsKey {
            devtoolsPublicKey = try DevtoolsTokenCommand.publicKey(in: devtoolsKey, named: "--devtools-key")
        } else {
            guard let key = topology?.devtools?.publicKey else {
                throw CLIError("this cluster's config names no [devtools] key: pass --devtools-key with the devtools' .pub")
            }
            devtoolsPublicKey = key
        }
        guard let token = DevtoolsKeyToken.token(developer: developer, devtoolsPublicKey: devtoolsPublicKey) else {
            throw CLIError("no token can be made from this key pair and that devtools key")
        }
        // Where this host can read the cluster's list, say when the key is not on it: the token is
        // refused until it is.
        if let file = topology?.security?.authorizedKeysFile, let text = try? String(contentsOfFile: file, encoding: .utf8),
            !ZAPHandler.listedKeys(text).contains(developer.publicKey)
        {
            printError("note: \(keyFile)'s key is not in \(file): the devtools refuse its token until it is listed there")
        }
        emitLine(token)
    }

    /// A public key given as itself or as a file holding it (a `.pub` that `keygen` wrote).
    static func publicKey(in given: String, named: String) throws -> String {
        let text = (try? String(contentsOfFile: given, encoding: .utf8)) ?? given
        guard let key = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: KeyPair.isPublicKey)
        else { throw CLIError("\(named) \(given) is not a public key (40 Z85 characters) nor a file holding one") }
        return key
    }
}
