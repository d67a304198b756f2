/// A payload ``GenericJSON`` cannot turn into JSON: truncated, malformed, or a value JSON cannot hold.
public struct GenericJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case truncated, malformed, invalidUTF8, tooDeep, notRepresentable
        }
        private let value: Value
        /// A length, count or value runs past the end of the bytes (or of its container).
        public static let truncated = Code(value: .truncated)
        /// A byte that cannot be there: an unknown tag, a container whose length does not match what it
        /// holds, trailing bytes, or JSON that does not parse.
        public static let malformed = Code(value: .malformed)
        /// A string or key that is not UTF-8.
        public static let invalidUTF8 = Code(value: .invalidUTF8)
        /// Arrays and objects nested deeper than ``GenericJSON/maximumDepth``.
        public static let tooDeep = Code(value: .tooDeep)
        /// A number JSON cannot write: NaN, an infinity, or one too large for a `Double`.
        public static let notRepresentable = Code(value: .notRepresentable)
        public var description: String { "\(value)" }
    }

    public let code: Code
    /// Where in the payload it went wrong.
    public let offset: Int
    public let message: String

    public init(_ code: Code, at offset: Int, _ message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) (at byte \(offset) of the payload)" }
}
