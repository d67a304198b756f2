extension Topology {
    /// The CURVE settings a client of this cluster connects with: the cluster's client key, or the key
    /// pair in `keyFile` (nil when the cluster has no security section).
    public func clientSecurity(keyFile: String? = nil) throws -> Security.Settings? {
        guard let security else { return nil }
        return Security.Settings(server: nil, serverPublicKey: security.serverPublicKey, client: try KeyPair.load(keyFile ?? security.clientKeyFile))
    }
}
