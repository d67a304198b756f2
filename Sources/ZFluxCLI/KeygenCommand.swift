import ArgumentParser
import Foundation
import NodeSupport
import ZeroMQ

struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub (public) in --dir.",
        discussion: """
            A cluster with a [security] section speaks CURVE on every tcp socket. It needs a server key \
            pair (the nodes bind with it), a client key pair (nodes and local commands connect with it; \
            $ZFLUX_KEY picks another), and an authorized-keys file listing every client public key \
            allowed in. Edit that file at any time: nodes read it again when it changes.
              zflux keygen server --dir keys
              zflux keygen client --dir keys
              grep -v '^#' keys/client.pub > keys/authorized_keys
            A dispatcher pair over tcp also needs a key pair per member, named in its [[dispatcher]] \
            entry (key = "keys/d1.key"): each member's replication port admits only the other's.
              zflux keygen d1 --dir keys && zflux keygen d2 --dir keys
            """)

    @Argument(help: "The key pair's name.") var name: String
    @Option(help: "Where to write the files.") var dir = "keys"

    func run() throws {
        guard Curve.isAvailable else { throw CLIError("this libzmq was built without CURVE support") }
        let files = try KeyPair.generate(name: name, directory: dir)
        emitLine("secret key pair: \(files.secretFile) (mode 0600)")
        emitLine("public key:      \(files.publicFile)")
    }
}
