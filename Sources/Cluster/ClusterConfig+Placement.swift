import FluxCore
import NodeSupport

/// Where a node of the config runs: the keys `[dispatcher]`, each `[[dispatcher]]` entry and each
/// `[[store]]` entry share, checked one way (``ClusterConfig/checkPlacement(transport:stores:)``) and
/// carried one way into the node's endpoints (``bind(_:)``), with the settings of its own table.
protocol NodePlacement {
    var host: String? { get }
    var listen: String? { get }
    var port: Int? { get }
    var metricsPort: Int? { get }
    var metricsListen: String? { get }
    /// The table its errors point into: "dispatcher" or "store".
    static var table: String { get }
    static var portSetting: Setting<Int> { get }
    static var metricsPortSetting: Setting<Int> { get }
    static var metricsListenSetting: Setting<String> { get }
}

extension ClusterConfig.DispatcherSection: NodePlacement {
    static let table = "dispatcher"
    static let portSetting = Settings.Dispatcher.port, metricsPortSetting = Settings.Dispatcher.metricsPort
    static let metricsListenSetting = Settings.Dispatcher.metricsListen
}

extension ClusterConfig.DispatcherMemberSection: NodePlacement {
    static let table = "dispatcher"
    static let portSetting = Settings.PairMember.port, metricsPortSetting = Settings.PairMember.metricsPort
    static let metricsListenSetting = Settings.PairMember.metricsListen
}

extension ClusterConfig.StoreSection: NodePlacement {
    static let table = "store"
    static let portSetting = Settings.Store.port, metricsPortSetting = Settings.Store.metricsPort
    static let metricsListenSetting = Settings.Store.metricsListen
}

/// A node's endpoints in the topology: what it binds instead of its advertised host, and its metrics port.
protocol NodeBinding {
    var listen: String? { get set }
    var metricsPort: Int? { get set }
    var metricsListen: String? { get set }
}

extension Topology.DispatcherEndpoints: NodeBinding {}
extension Topology.StoreEndpoints: NodeBinding {}

extension NodePlacement {
    /// `endpoints` with this entry's bind address and metrics port; the metrics port's address is its
    /// table's default when the entry names none.
    func bind(_ endpoints: inout some NodeBinding) {
        endpoints.listen = listen
        endpoints.metricsPort = metricsPort
        if metricsPort != nil { endpoints.metricsListen = Self.metricsListenSetting.value(metricsListen) }
    }
}
