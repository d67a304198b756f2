/// CURVE settings, carried explicitly in each node's and client's configuration (no process-wide
/// state): with them, every tcp socket bound is a CURVE server and every tcp socket connected is a
/// CURVE client. ipc and inproc are unaffected (the run directory's file mode guards ipc).
public enum Security {
    public struct Settings: Sendable, Equatable {
        /// The cluster's server key pair: the nodes' bound sockets use it (nil for clients).
        public var server: KeyPair?
        /// The public half of the server key, for connecting.
        public var serverPublicKey: String
        /// This process's own key pair when connecting.
        public var client: KeyPair

        public init(server: KeyPair?, serverPublicKey: String, client: KeyPair) {
            self.server = server
            self.serverPublicKey = serverPublicKey
            self.client = client
        }
    }
}
