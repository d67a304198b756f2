// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Star.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

// Star.swift: Star.Status

extension Star.Status: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        try writer.encode(self.rawValue)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        let __raw = try reader.decode(Swift.String.self)
        guard let __value = Self(rawValue: __raw) else {
            throw reader.badRawValue(Self.self, __raw)
        }
        self = __value
    }
}

// Star.swift: Star.State

extension Star.State {
    typealias __WireType0 = Star.Status
    typealias __WireType1 = Int
    typealias __WireType2 = String
}

extension Star.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("status");
        try writer.encode(self.status)
        writer.key("count");
        try writer.encode(self.count)
        if let __value = self.lastError {
            writer.key("lastError");
            try writer.encode(__value);
            __present += 1
        }
        writer.end(__map, count: 2 + __present)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        var __f2: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "status") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "status")
            } else if reader.key(__key, is: "count") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "count")
            } else if reader.key(__key, is: "lastError") {
                __f2 = try reader.decodeIfPresent(Self.__WireType2.self, forKey: "lastError")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("status")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("count")
        }
        let __v2 = __f2
        self.status = __v0
        self.count = __v1
        self.lastError = __v2
    }
}

// Star.swift: Star.Action

extension Star.Action {
    typealias __WireType0 = Bool
    typealias __WireType1 = Bool
}

extension Star.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .starTapped:
            let __outer = writer.beginMap()
            writer.key("starTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .starResponse(let __a0):
            let __outer = writer.beginMap()
            writer.key("starResponse")
            let __map = writer.beginMap()
    writer.key("success");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .unstarResponse(let __a0):
            let __outer = writer.beginMap()
            writer.key("unstarResponse")
            let __map = writer.beginMap()
    writer.key("success");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        }
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        let __outer = try reader.beginMap()
        var __case = -1, __known = 0, __at = 0
        for _ in 0 ..< __outer.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "starTapped") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "starResponse") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "unstarResponse") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            }
            try reader.skipValue()
        }
        try reader.end(__outer)
        guard __known == 1 else {
            throw reader.caseCount(Self.self)
        }
        let __end = reader.offset
        reader.offset = __at
        switch __case {
        case 0:
            try reader.end(try reader.beginMap())
            self = .starTapped
        case 1:
            do {
                var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "success") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "success")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("success")
                }
                self = .starResponse(success: __v0)
            }
        case 2:
            do {
                var __f0: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "success") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "success")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("success")
                }
                self = .unstarResponse(success: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}
