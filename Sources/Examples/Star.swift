import FluxCore

/// ReSwift's star button: tapping starts a request (staring / unstaring); the answer arrives later as an
/// action the request's effect sends, through the dispatcher like any other.
public enum Star {
    // @WireCodable: written out in Star+WireCodable.swift
    public enum Status: String, Codable, Equatable, Sendable {
        case unstarred, staring, starred, unstaring
    }

    // @WireCodable: written out in Star+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        public var status: Status = .unstarred
        public var count: Int = 0
        public var lastError: String? = nil
        public init(status: Status = .unstarred, count: Int = 0, lastError: String? = nil) {
            self.status = status
            self.count = count
            self.lastError = lastError
        }
    }

    // @WireCodable: written out in Star+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case starTapped
        case starResponse(success: Bool)
        case unstarResponse(success: Bool)
    }

    public struct Environment: Sendable {
        /// Stars or unstars (true: star) on the server; throws when the server refuses.
        public var request: @Sendable (_ star: Bool) async throws -> Void

        public init(request: @escaping @Sendable (Bool) async throws -> Void) { self.request = request }

        /// A stand-in for the server: a second's delay, then success.
        public static let live = Environment { _ in try await EffectClock.live.sleep(.seconds(1)) }

        public static func mock(succeeds: Bool) -> Environment {
            Environment { _ in if !succeeds { throw RequestFailed() } }
        }
    }

    public struct RequestFailed: Error {}

    enum CancelID: Hashable, Sendable { case request }

    public static let reducer = Reducer<State, Action, Environment> { state, action, environment in
        switch action {
        case .starTapped:
            let star: Bool
            switch state.status {
            case .unstarred: state.status = .staring; star = true
            case .starred: state.status = .unstaring; star = false
            case .staring, .unstaring: return .none  // a request is under way: taps wait for it
            }
            state.lastError = nil
            return .run { send in
                let success = (try? await environment.request(star)) != nil
                if Task.isCancelled { return }
                send(star ? .starResponse(success: success) : .unstarResponse(success: success))
            }
            .cancellable(id: CancelID.request, cancelInFlight: true)
        case .starResponse(let success):
            guard state.status == .staring else { return .none }
            if success {
                state.status = .starred
                state.count += 1
            } else {
                state.status = .unstarred
                state.lastError = "could not star"
            }
            return .none
        case .unstarResponse(let success):
            guard state.status == .unstaring else { return .none }
            if success {
                state.status = .unstarred
                state.count -= 1
            } else {
                state.status = .starred
                state.lastError = "could not unstar"
            }
            return .none
        }
    }

    public static func render(_ state: State) -> String {
        let button =
            switch state.status {
            case .unstarred: "☆ Star"
            case .staring: "★ Starring…"
            case .starred: "★ Starred"
            case .unstaring: "☆ Unstarring…"
            }
        return "[\(button)]  \(state.count) star\(state.count == 1 ? "" : "s")" + (state.lastError.map { "  ! \($0)" } ?? "")
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "star", summary: "ReSwift's star button: a request per tap, its answer as a later action", initialState: State(),
            reducer: reducer, environment: environment, render: render,
            actions: [
                .user(.starTapped, "star, or unstar when starred (ignored while a request runs)"),
                .effect(.starResponse(success: true), "the server's answer to a star request"),
                .effect(.unstarResponse(success: true), "the server's answer to an unstar request"),
            ])
    }
}
