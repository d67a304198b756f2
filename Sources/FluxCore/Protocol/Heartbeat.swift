/// How often a node says it is alive when it has nothing else to say: the dispatcher's heartbeats on
/// the actions stream, a store's on its state stream, a view's to its store. The one default that the
/// cores' rules, the nodes' configurations, the topology and the cluster config (`[cluster]
/// heartbeat_ms`) all start from; peers' silence timeouts count in it.
/// (`@usableFromInline`: a public function's default argument names it.)
@usableFromInline package enum Heartbeat {
    @usableFromInline package static let defaultMilliseconds = 200
}
