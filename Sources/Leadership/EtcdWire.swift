import Foundation

/// The JSON of etcd's v3 gateway (grpc-gateway over etcd's protobuf messages).
///
/// Its quirks, which every type here follows: keys and values are base64; int64 fields are JSON strings
/// (sent as strings too, which the gateway accepts); fields holding their default (0, false, empty) are
/// left out of answers; answers name fields as the .proto does (`create_revision`, `response_put`), but
/// `ID` and `TTL` are upper case there.
enum Wire {
    // MARK: Requests

    struct Range: Encodable {
        let key: String
        init(key: String) { self.key = Wire.base64(key) }
    }

    struct Put: Encodable {
        let key: String
        let value: String
        let lease: String?
        init(key: String, value: [UInt8], lease: Int64?) {
            self.key = Wire.base64(key)
            self.value = Data(value).base64EncodedString()
            self.lease = lease.map(String.init)
        }
    }

    struct DeleteRange: Encodable {
        let key: String
        init(key: String) { self.key = Wire.base64(key) }
    }

    /// One condition of a transaction; the comparison is etcd's default, EQUAL.
    struct Compare: Encodable {
        let target: String
        let key: String
        let createRevision: String?
        let lease: String?
        enum CodingKeys: String, CodingKey {
            case target, key, lease
            case createRevision = "create_revision"
        }

        /// True when `key` was created at `revision` (0: when it does not exist).
        static func created(_ key: String, at revision: Int64) -> Compare {
            Compare(target: "CREATE", key: Wire.base64(key), createRevision: String(revision), lease: nil)
        }

        /// True when `key` is attached to `lease` (0: to none, or the key does not exist).
        static func leased(_ key: String, to lease: Int64) -> Compare {
            Compare(target: "LEASE", key: Wire.base64(key), createRevision: nil, lease: String(lease))
        }
    }

    struct Operation: Encodable {
        var range: Range?
        var put: Put?
        var deleteRange: DeleteRange?
        enum CodingKeys: String, CodingKey {
            case range = "request_range"
            case put = "request_put"
            case deleteRange = "request_delete_range"
        }
    }

    struct Txn: Encodable {
        let compare: [Compare]
        let success: [Operation]
        let failure: [Operation]
    }

    struct LeaseGrant: Encodable {
        let ttl: String
        enum CodingKeys: String, CodingKey { case ttl = "TTL" }
    }

    struct LeaseID: Encodable {
        let id: String
        enum CodingKeys: String, CodingKey { case id = "ID" }
    }

    // MARK: Answers

    struct Header: Decodable {
        let revision: Int64

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            revision = try container.int64(.revision)
        }
        enum CodingKeys: String, CodingKey { case revision }
    }

    struct KeyValue: Decodable {
        let key: [UInt8]
        let value: [UInt8]
        let createRevision: Int64
        let modRevision: Int64
        let version: Int64
        let lease: Int64

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.bytes(.key)
            value = try container.bytes(.value)
            createRevision = try container.int64(.createRevision)
            modRevision = try container.int64(.modRevision)
            version = try container.int64(.version)
            lease = try container.int64(.lease)
        }
        enum CodingKeys: String, CodingKey {
            case key, value, version, lease
            case createRevision = "create_revision"
            case modRevision = "mod_revision"
        }
    }

    struct RangeAnswer: Decodable {
        let header: Header
        let kvs: [KeyValue]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            header = try container.decode(Header.self, forKey: .header)
            kvs = try container.decodeIfPresent([KeyValue].self, forKey: .kvs) ?? []
        }
        enum CodingKeys: String, CodingKey { case header, kvs }
    }

    struct HeaderOnly: Decodable {
        let header: Header
    }

    struct DeleteRangeAnswer: Decodable {
        let header: Header
        let deleted: Int64

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            header = try container.decode(Header.self, forKey: .header)
            deleted = try container.int64(.deleted)
        }
        enum CodingKeys: String, CodingKey { case header, deleted }
    }

    /// One answer inside a transaction's; the one that is present matches the operation sent.
    struct OperationAnswer: Decodable {
        let range: RangeAnswer?
        enum CodingKeys: String, CodingKey { case range = "response_range" }
    }

    struct TxnAnswer: Decodable {
        let header: Header
        let succeeded: Bool
        let responses: [OperationAnswer]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            header = try container.decode(Header.self, forKey: .header)
            succeeded = try container.decodeIfPresent(Bool.self, forKey: .succeeded) ?? false
            responses = try container.decodeIfPresent([OperationAnswer].self, forKey: .responses) ?? []
        }
        enum CodingKeys: String, CodingKey { case header, succeeded, responses }
    }

    /// The answer to a grant, a keepalive or a time-to-live question. `TTL` is absent (0) in a keepalive's
    /// answer and -1 in a time-to-live's when the lease is gone; a grant can fail with `error` set.
    struct LeaseAnswer: Decodable {
        let header: Header
        let id: Int64
        let ttl: Int64
        let error: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            header = try container.decode(Header.self, forKey: .header)
            id = try container.int64(.id)
            ttl = try container.int64(.ttl)
            error = try container.decodeIfPresent(String.self, forKey: .error)
        }
        enum CodingKeys: String, CodingKey {
            case header, error
            case id = "ID"
            case ttl = "TTL"
        }
    }

    /// Keepalive is a streaming call: each answer comes wrapped in `result`, or an `error` takes its place.
    struct StreamedLeaseAnswer: Decodable {
        let result: LeaseAnswer?
        let error: Failure?
    }

    /// The gateway's body for a failed call: the gRPC status code and etcd's message.
    struct Failure: Decodable {
        let message: String?
        let error: String?
        let code: Int?

        var text: String { message ?? error ?? "no message" }
    }

    static func base64(_ key: String) -> String { Data(key.utf8).base64EncodedString() }
}

extension KeyedDecodingContainer {
    /// An int64 the gateway sent as a string (or, leniently, as a number); 0 when left out.
    fileprivate func int64(_ key: Key) throws -> Int64 {
        if let text = try? decodeIfPresent(String.self, forKey: key) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an int64: \(text)")
            }
            return value
        }
        return try decodeIfPresent(Int64.self, forKey: key) ?? 0
    }

    /// Bytes the gateway sent as base64; empty when left out.
    fileprivate func bytes(_ key: Key) throws -> [UInt8] {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return [] }
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not base64")
        }
        return [UInt8](data)
    }
}
