/// What a binary's apps are built with, for one process: the environments they get and where their
/// effects keep files. A host's app list is a function of it (``AnyApp`` values are built per node), so
/// a store started with `environment = "mock"` gets mock environments while the dispatcher, which only
/// checks actions, gets live ones.
public struct AppContext: Sendable, Equatable {
    /// The apps' mock environments: instant answers, no network, files in memory (`--mock`).
    public var mock: Bool
    /// Where a store's effects keep files; nil: the current directory.
    public var dataDirectory: String?

    public init(mock: Bool = false, dataDirectory: String? = nil) {
        self.mock = mock
        self.dataDirectory = dataDirectory
    }

    /// Live environments, no data directory: what the dispatcher and the clients build apps with.
    public static let live = AppContext()
}
