// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Counter.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

// Counter.swift: Counter.State

extension Counter.State {
    typealias __WireType0 = Int
}

extension Counter.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("count");
        try writer.encode(self.count)
        writer.end(__map, count: 1)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "count") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "count")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("count")
        }
        self.count = __v0
    }
}

// Counter.swift: Counter.Action

extension Counter.Action {
    typealias __WireType0 = Int
}

extension Counter.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .incrementTapped:
            let __outer = writer.beginMap()
            writer.key("incrementTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .decrementTapped:
            let __outer = writer.beginMap()
            writer.key("decrementTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .addTapped(let __a0):
            let __outer = writer.beginMap()
            writer.key("addTapped")
            let __map = writer.beginMap()
    writer.key("amount");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .resetTapped:
            let __outer = writer.beginMap()
            writer.key("resetTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        }
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        let __outer = try reader.beginMap()
        var __case = -1, __known = 0, __at = 0
        for _ in 0 ..< __outer.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "incrementTapped") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "decrementTapped") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "addTapped") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "resetTapped") {
                __case = 3;
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
            self = .incrementTapped
        case 1:
            try reader.end(try reader.beginMap())
            self = .decrementTapped
        case 2:
            do {
                var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "amount") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "amount")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("amount")
                }
                self = .addTapped(amount: __v0)
            }
        case 3:
            try reader.end(try reader.beginMap())
            self = .resetTapped
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}
