import FluxCore

/// PlanGrid's annotation filter: filters on annotation types and, inside the issue group, on issue
/// properties. Turning on an issue-specific filter turns on the issue type filter too.
public enum AnnotationFilter {
    // @WireCodable: written out in AnnotationFilter+WireCodable.swift
    public enum Filter: String, Codable, CaseIterable, Comparable, Sendable {
        // Annotation types.
        case issues, photos, links, text
        // Issue-specific filters (the issues group).
        case issueOpen, issueInReview, issueClosed, assignedToMe

        public var group: Group { Group.allCases.first { $0.filters.contains(self) } ?? .types }
        /// Declaration order (`allCases` holds every case, so the fallback to names is never taken).
        public static func < (a: Filter, b: Filter) -> Bool {
            guard let i = allCases.firstIndex(of: a), let j = allCases.firstIndex(of: b) else { return a.rawValue < b.rawValue }
            return i < j
        }
    }

    // @WireCodable: written out in AnnotationFilter+WireCodable.swift
    public enum Group: String, Codable, CaseIterable, Sendable {
        case types, issues
        public var filters: [Filter] {
            switch self {
            case .types: [.issues, .photos, .links, .text]
            case .issues: [.issueOpen, .issueInReview, .issueClosed, .assignedToMe]
            }
        }
    }

    // @WireCodable: written out in AnnotationFilter+WireCodable.swift
    public struct State: Codable, Equatable, Sendable {
        /// The active filters, kept sorted so equal states encode to equal bytes.
        public var active: [Filter] = []
        /// The group the user has opened, if any.
        public var openGroup: Group? = nil
        public init(active: [Filter] = [], openGroup: Group? = nil) {
            self.active = active.sorted()
            self.openGroup = openGroup
        }
        public var isFiltering: Bool { !active.isEmpty }
        public func isActive(_ filter: Filter) -> Bool { active.contains(filter) }
    }

    // @WireCodable: written out in AnnotationFilter+WireCodable.swift
    public enum Action: Codable, Equatable, Sendable {
        case filterToggled(filter: Filter)
        case groupEntered(group: Group)
        case groupLeft
        case resetAllTapped
        case resetGroupTapped(group: Group)
    }

    public struct Environment: Sendable {
        public init() {}
        public static let live = Environment()
    }

    public static let reducer = Reducer<State, Action, Environment> { state, action, _ in
        switch action {
        case .filterToggled(let filter):
            if let index = state.active.firstIndex(of: filter) {
                state.active.remove(at: index)
            } else {
                state.active.append(filter)
                // Filtering on an issue property only makes sense while issues are shown.
                if filter.group == .issues && !state.active.contains(.issues) { state.active.append(.issues) }
                state.active.sort()
            }
        case .groupEntered(let group):
            state.openGroup = group
        case .groupLeft:
            state.openGroup = nil
        case .resetAllTapped:
            state.active = []
        case .resetGroupTapped(let group):
            state.active.removeAll { group.filters.contains($0) }
        }
        return .none
    }

    public static func render(_ state: State) -> String {
        var lines = ["Filters" + (state.isFiltering ? " (filtering)" : "") + (state.openGroup.map { " › \($0.rawValue)" } ?? "")]
        for group in Group.allCases {
            let marks = group.filters.map { "[\(state.isActive($0) ? "x" : " ")] \($0.rawValue)" }.joined(separator: "  ")
            lines.append("  \(group.rawValue): \(marks)")
        }
        return lines.joined(separator: "\n")
    }

    public static func app(environment: Environment = .live) -> FluxApp<State, Action, Environment> {
        FluxApp(
            name: "filter", summary: "PlanGrid's annotation filter: types, and issue filters that turn the issue type on",
            initialState: State(), reducer: reducer, environment: environment, render: render,
            actions: [
                .user(.filterToggled(filter: .issueOpen), "turn a filter on or off"),
                .user(.groupEntered(group: .issues), "open a group of filters"),
                .user(.groupLeft, "close the open group"),
                .user(.resetAllTapped, "turn every filter off"),
                .user(.resetGroupTapped(group: .issues), "turn a group's filters off"),
            ])
    }
}
