// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in TodoStats.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

// TodoStats.swift: TodoStats.State

extension TodoStats.State {
    typealias __WireType0 = Int
    typealias __WireType1 = Int
    typealias __WireType2 = Int
    typealias __WireType3 = Int
    typealias __WireType4 = Bool
}

extension TodoStats.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("total");
        try writer.encode(self.total)
        writer.key("done");
        try writer.encode(self.done)
        writer.key("changes");
        try writer.encode(self.changes)
        if let __value = self.goal {
            writer.key("goal");
            try writer.encode(__value);
            __present += 1
        }
        writer.key("goalReached");
        try writer.encode(self.goalReached)
        writer.end(__map, count: 4 + __present)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        var __f2: Self.__WireType2? = nil
        var __f3: Self.__WireType3? = nil
        var __f4: Self.__WireType4? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "total") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "total")
            } else if reader.key(__key, is: "done") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "done")
            } else if reader.key(__key, is: "changes") {
                __f2 = try reader.decode(Self.__WireType2.self, forKey: "changes")
            } else if reader.key(__key, is: "goal") {
                __f3 = try reader.decodeIfPresent(Self.__WireType3.self, forKey: "goal")
            } else if reader.key(__key, is: "goalReached") {
                __f4 = try reader.decode(Self.__WireType4.self, forKey: "goalReached")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("total")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("done")
        }
        guard let __v2 = __f2 else {
            throw reader.missing("changes")
        }
        let __v3 = __f3
        guard let __v4 = __f4 else {
            throw reader.missing("goalReached")
        }
        self.total = __v0
        self.done = __v1
        self.changes = __v2
        self.goal = __v3
        self.goalReached = __v4
    }
}

// TodoStats.swift: TodoStats.Action

extension TodoStats.Action {
    typealias __WireType0 = Int
}

extension TodoStats.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .goalSet(let __a0):
            let __outer = writer.beginMap()
            writer.key("goalSet")
            let __map = writer.beginMap()
    writer.key("done");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .goalCleared:
            let __outer = writer.beginMap()
            writer.key("goalCleared")
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
            if reader.key(__key, is: "goalSet") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "goalCleared") {
                __case = 1;
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
            do {
                var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "done") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "done")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("done")
                }
                self = .goalSet(done: __v0)
            }
        case 1:
            try reader.end(try reader.beginMap())
            self = .goalCleared
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}
