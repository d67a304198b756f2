import Foundation
import ZeroMQ

/// A CURVE key pair on disk. The secret file (mode 0600) holds both halves; the `.pub` file beside it
/// only the public one, for authorized-keys files.
public struct KeyPair: Equatable, Sendable {
    public var publicKey: String
    public var secretKey: String

    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Writes `NAME.key` (secret, 0600) and `NAME.pub` in `directory`; refuses to overwrite.
    public static func generate(name: String, directory: String) throws -> (secretFile: String, publicFile: String) {
        let pair = try Curve.keyPair()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secretFile = directory + "/" + name + ".key", publicFile = directory + "/" + name + ".pub"
        for file in [secretFile, publicFile] where FileManager.default.fileExists(atPath: file) {
            throw NodeError("\(file) exists; remove it first to make a new key pair")
        }
        let secret = "# zflux CURVE key pair '\(name)': keep this file secret\npublic-key = \(pair.publicKey)\nsecret-key = \(pair.secretKey)\n"
        guard FileManager.default.createFile(atPath: secretFile, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw NodeError("cannot write \(secretFile)")
        }
        try "# zflux CURVE public key '\(name)'\n\(pair.publicKey)\n".write(toFile: publicFile, atomically: true, encoding: .utf8)
        return (secretFile, publicFile)
    }

    /// True when `text` is a CURVE public key in Z85 (40 characters).
    public static func isPublicKey(_ text: String) -> Bool { text.utf8.count == 40 && Curve.decode(text) != nil }

    /// Reads a secret key file written by `generate`.
    /// Refuses a file that other users can read or anyone but its owner can change (as ssh does with
    /// private keys). Group read alone is allowed: Kubernetes mounts a Secret with `fsGroup` as 0440.
    public static func load(_ path: String) throws -> KeyPair {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o027 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw NodeError("the secret key file \(path) is open to other users (mode 0\(mode)): run `chmod 600 \(path)`")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw NodeError("cannot read the key file \(path)") }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard let publicKey = values["public-key"], Curve.decode(publicKey) != nil,
            let secretKey = values["secret-key"], Curve.decode(secretKey) != nil
        else {
            throw NodeError("\(path) is not a zflux key file (make one with `\(StandardOutput.programName) keygen`)")
        }
        return KeyPair(publicKey: publicKey, secretKey: secretKey)
    }

    /// Reads the secret key file at `path` (as ``load(_:)``), whose public half must be `publicKey`, the
    /// one read from the `.pub` beside it, which clients and partners connect with: a pair whose halves
    /// come from two different keys would answer none of them.
    package static func load(_ path: String, publicHalf publicKey: String) throws -> KeyPair {
        let pair = try load(path)
        guard pair.publicKey == publicKey else {
            throw NodeError("the public key file beside \(path) is not that key's public half: copy the .pub made with it")
        }
        return pair
    }
}
