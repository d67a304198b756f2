extension BinaryPayloadCodec {
    /// How deep ``isWellFormed(_:)`` follows containers; a deeper payload is not called well formed
    /// (the intake then decodes it, which says what is wrong with it, if anything).
    static let structureDepth = 64

    /// Whether `bytes` is one binary payload whose structure holds together, read in place and without
    /// allocating: known tags, varints that end, strings and keys of UTF-8 within the bytes, and each
    /// container's entries ending exactly where its length says, with nothing after the value.
    ///
    /// It says nothing of the types a decoder expects: a well-formed payload may still fail to decode
    /// as an app's action, which its stores then refuse, each the same way.
    package static func isWellFormed(_ bytes: [UInt8]) -> Bool { isWellFormed(bytes, in: 0..<bytes.count) }

    /// ``isWellFormed(_:)`` of the payload that fills `range` of `bytes` (a batch's entry, in place).
    package static func isWellFormed(_ bytes: [UInt8], in range: Range<Int>) -> Bool {
        guard !range.isEmpty, bytes[range.lowerBound] == marker else { return false }
        let end = try? BinaryToJSON(reading: bytes).wellFormedEnd(at: range.lowerBound + 1, limit: range.upperBound, depth: 0)
        return end == range.upperBound
    }
}

extension BinaryToJSON {
    /// A reader of `input` that writes nothing: no output is reserved.
    init(reading input: [UInt8]) { reader = WireReader(input) }

    /// The offset just past the value at `offset` (within `limit`), having checked its whole structure
    /// with the readers the transcoder uses: tags, varints, containers, and UTF-8 in strings and keys.
    func wellFormedEnd(at offset: Int, limit: Int, depth: Int) throws(GenericJSONError) -> Int {
        let kind = try tag(at: offset, limit: limit)
        switch kind {
        case .string:
            let (start, end) = try run(at: offset + 1, limit: limit)
            try JSONText.validateUTF8(input, start, end)
            return end
        case .array, .map:
            guard depth < BinaryPayloadCodec.structureDepth else {
                throw GenericJSONError(.tooDeep, at: offset, "arrays and objects nested deeper than \(BinaryPayloadCodec.structureDepth)")
            }
            // Depth 0 here: the limit of this walk is its own, checked above.
            let (first, count, end) = try container(at: offset, limit: limit, depth: 0)
            var at = first
            for _ in 0..<count {
                if kind == .map {
                    let (keyStart, keyEnd) = try run(at: at, limit: end)
                    try JSONText.validateUTF8(input, keyStart, keyEnd)
                    at = keyEnd
                }
                at = try wellFormedEnd(at: at, limit: end, depth: depth + 1)
            }
            guard at == end else { throw lengthMismatch(offset, at, end) }
            return end
        default:
            return try skip(at: offset, limit: limit)
        }
    }
}
