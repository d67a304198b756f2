/// One protocol message: `[topic][header][payload]`.
///
/// On a ROUTER socket the peer's routing id comes first; `Message.split(routed:)` separates it.
public struct Message: Equatable, Sendable {
    /// PUB/SUB filter: the app name for ACTION, the store name for STATE, empty otherwise.
    public var topic: [UInt8]
    public var header: Header
    public var payload: [UInt8]

    public init(topic: [UInt8] = [], header: Header, payload: [UInt8] = []) {
        self.topic = topic
        self.header = header
        self.payload = payload
    }

    public init(topic: String, header: Header, payload: [UInt8] = []) {
        self.init(topic: Array(topic.utf8), header: header, payload: payload)
    }

    /// The header's wire bytes. (The dispatcher never builds a message per action it stamps: it writes
    /// each header once, into its records, ``StampedRecords``.)
    public var encodedHeader: [UInt8] { header.encoded() }

    public var kind: MessageKind { header.kind }
    public var topicString: String { String(decoding: topic, as: UTF8.self) }

    /// The three wire frames.
    public var frames: [[UInt8]] { [topic, encodedHeader, payload] }

    /// Decodes exactly three frames.
    public init(frames: [[UInt8]]) throws(ProtocolError) {
        guard frames.count == 3 else {
            throw ProtocolError(.wrongFrameCount, "a message has 3 frames (topic, header, payload), got \(frames.count)")
        }
        self.init(topic: frames[0], header: try Header(decoding: frames[1]), payload: frames[2])
    }

    /// Splits a message received on a ROUTER into the sender's routing id and the message.
    public static func split(routed frames: [[UInt8]]) throws(ProtocolError) -> (peer: [UInt8], message: Message) {
        guard frames.count == 4 else {
            throw ProtocolError(.wrongFrameCount, "a message has 3 frames (topic, header, payload), got \(max(frames.count - 1, 0))")
        }
        return (frames[0], try Message(frames: Array(frames[1...])))
    }

    /// Frames to send this message to `peer` through a ROUTER.
    public func routedFrames(to peer: [UInt8]) -> [[UInt8]] { [peer] + frames }
}
