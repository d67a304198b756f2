// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Food.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore
import Foundation

// Food.swift: Food.Item

extension Food.Item {
    typealias __WireType0 = String
    typealias __WireType1 = Int
    typealias __WireType2 = Date
}

extension Food.Item: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("name");
        try writer.encode(self.name)
        writer.key("calories");
        try writer.encode(self.calories)
        writer.key("eatenAt");
        try writer.encode(self.eatenAt)
        writer.end(__map, count: 3)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        var __f2: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "name") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "name")
            } else if reader.key(__key, is: "calories") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "calories")
            } else if reader.key(__key, is: "eatenAt") {
                __f2 = try reader.decode(Self.__WireType2.self, forKey: "eatenAt")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("name")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("calories")
        }
        guard let __v2 = __f2 else {
            throw reader.missing("eatenAt")
        }
        self.name = __v0
        self.calories = __v1
        self.eatenAt = __v2
    }
}

// Food.swift: Food.Row

extension Food.Row {
    typealias __WireType0 = Food.Item
    typealias __WireType1 = String
}

extension Food.Row: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("item");
        try writer.encode(self.item)
        writer.key("eaten");
        try writer.encode(self.eaten)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "item") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "item")
            } else if reader.key(__key, is: "eaten") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "eaten")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("item")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("eaten")
        }
        self.item = __v0
        self.eaten = __v1
    }
}

// Food.swift: Food.State

extension Food.State {
    typealias __WireType0 = String
    typealias __WireType1 = [Food.Row]
    typealias __WireType2 = Bool
    typealias __WireType3 = String
}

extension Food.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        if let __value = self.user {
            writer.key("user");
            try writer.encode(__value);
            __present += 1
        }
        writer.key("rows");
        try writer.encode(self.rows)
        writer.key("isLoading");
        try writer.encode(self.isLoading)
        if let __value = self.error {
            writer.key("error");
            try writer.encode(__value);
            __present += 1
        }
        writer.end(__map, count: 2 + __present)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        var __f2: Self.__WireType2? = nil
        var __f3: Self.__WireType3? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "user") {
                __f0 = try reader.decodeIfPresent(Self.__WireType0.self, forKey: "user")
            } else if reader.key(__key, is: "rows") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "rows")
            } else if reader.key(__key, is: "isLoading") {
                __f2 = try reader.decode(Self.__WireType2.self, forKey: "isLoading")
            } else if reader.key(__key, is: "error") {
                __f3 = try reader.decodeIfPresent(Self.__WireType3.self, forKey: "error")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        let __v0 = __f0
        guard let __v1 = __f1 else {
            throw reader.missing("rows")
        }
        guard let __v2 = __f2 else {
            throw reader.missing("isLoading")
        }
        let __v3 = __f3
        self.user = __v0
        self.rows = __v1
        self.isLoading = __v2
        self.error = __v3
    }
}

// Food.swift: Food.Action

extension Food.Action {
    typealias __WireType0 = [Food.Item]
    typealias __WireType1 = String
}

extension Food.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .refreshTapped:
            let __outer = writer.beginMap()
            writer.key("refreshTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .listLoaded(let __a0):
            let __outer = writer.beginMap()
            writer.key("listLoaded")
            let __map = writer.beginMap()
    writer.key("items");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .loadFailed(let __a0):
            let __outer = writer.beginMap()
            writer.key("loadFailed")
            let __map = writer.beginMap()
    writer.key("reason");
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
            if reader.key(__key, is: "refreshTapped") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "listLoaded") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loadFailed") {
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
            self = .refreshTapped
        case 1:
            do {
                var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "items") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "items")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("items")
                }
                self = .listLoaded(items: __v0)
            }
        case 2:
            do {
                var __f0: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "reason") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "reason")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("reason")
                }
                self = .loadFailed(reason: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}
