/// A message that does not follow the wire protocol (docs/PROTOCOL.md). The receiver drops it (or NACKs it, at the intake)
/// and keeps running; `description` names what was wrong so it can be sent back as a NACK reason.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case wrongFrameCount, truncated, badMagic, unsupportedVersion, unknownKind, badActionType
            case unexpectedKind, malformedPayload, tooLarge
        }
        private let value: Value
        public static let wrongFrameCount = Code(value: .wrongFrameCount)
        public static let truncated = Code(value: .truncated)
        public static let badMagic = Code(value: .badMagic)
        public static let unsupportedVersion = Code(value: .unsupportedVersion)
        public static let unknownKind = Code(value: .unknownKind)
        public static let badActionType = Code(value: .badActionType)
        public static let unexpectedKind = Code(value: .unexpectedKind)
        public static let malformedPayload = Code(value: .malformedPayload)
        public static let tooLarge = Code(value: .tooLarge)
        public var description: String { "\(value)" }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
