// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the example types marked `// @WireCodable`, so that the
// examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore
import Foundation
import Synchronization

// AnnotationFilter.swift: AnnotationFilter.Filter

extension AnnotationFilter.Filter: WireEncodable, WireDecodable {
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

// AnnotationFilter.swift: AnnotationFilter.Group

extension AnnotationFilter.Group: WireEncodable, WireDecodable {
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

// AnnotationFilter.swift: AnnotationFilter.State

extension AnnotationFilter.State {
    typealias __WireType0 = [AnnotationFilter.Filter]
    typealias __WireType1 = AnnotationFilter.Group
}

extension AnnotationFilter.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("active");
        try writer.encode(self.active)
        if let __value = self.openGroup {
            writer.key("openGroup");
            try writer.encode(__value);
            __present += 1
        }
        writer.end(__map, count: 1 + __present)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "active") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "active")
            } else if reader.key(__key, is: "openGroup") {
                __f1 = try reader.decodeIfPresent(Self.__WireType1.self, forKey: "openGroup")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("active")
        }
        let __v1 = __f1
        self.active = __v0
        self.openGroup = __v1
    }
}

// AnnotationFilter.swift: AnnotationFilter.Action

extension AnnotationFilter.Action {
    typealias __WireType0 = AnnotationFilter.Filter
    typealias __WireType1 = AnnotationFilter.Group
    typealias __WireType2 = AnnotationFilter.Group
}

extension AnnotationFilter.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .filterToggled(let __a0):
            let __outer = writer.beginMap()
            writer.key("filterToggled")
            let __map = writer.beginMap()
    writer.key("filter");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .groupEntered(let __a0):
            let __outer = writer.beginMap()
            writer.key("groupEntered")
            let __map = writer.beginMap()
    writer.key("group");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .groupLeft:
            let __outer = writer.beginMap()
            writer.key("groupLeft")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .resetAllTapped:
            let __outer = writer.beginMap()
            writer.key("resetAllTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .resetGroupTapped(let __a0):
            let __outer = writer.beginMap()
            writer.key("resetGroupTapped")
            let __map = writer.beginMap()
    writer.key("group");
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
            if reader.key(__key, is: "filterToggled") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "groupEntered") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "groupLeft") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "resetAllTapped") {
                __case = 3;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "resetGroupTapped") {
                __case = 4;
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
            if reader.key(__key, is: "filter") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "filter")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("filter")
                }
                self = .filterToggled(filter: __v0)
            }
        case 1:
            do {
                var __f0: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "group") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "group")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("group")
                }
                self = .groupEntered(group: __v0)
            }
        case 2:
            try reader.end(try reader.beginMap())
            self = .groupLeft
        case 3:
            try reader.end(try reader.beginMap())
            self = .resetAllTapped
        case 4:
            do {
                var __f0: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "group") {
                __f0 = try reader.decode(Self.__WireType2.self, forKey: "group")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("group")
                }
                self = .resetGroupTapped(group: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}

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

// Drill.swift: Drill.State

extension Drill.State {
    typealias __WireType0 = Int
}

extension Drill.State: WireEncodable, WireDecodable {
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

// Drill.swift: Drill.Action

extension Drill.Action {
    typealias __WireType0 = String
}

extension Drill.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .tick:
            let __outer = writer.beginMap()
            writer.key("tick")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .crash(let __a0):
            let __outer = writer.beginMap()
            writer.key("crash")
            let __map = writer.beginMap()
    writer.key("note");
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
            if reader.key(__key, is: "tick") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "crash") {
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
            try reader.end(try reader.beginMap())
            self = .tick
        case 1:
            do {
                var __f0: Self.__WireType0? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "note") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "note")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("note")
                }
                self = .crash(note: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}

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

// Ledger.swift: Ledger.Account

extension Ledger.Account {
    typealias __WireType0 = Int
    typealias __WireType1 = String
}

extension Ledger.Account: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("balance");
        try writer.encode(self.balance)
        writer.key("memo");
        try writer.encode(self.memo)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "balance") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "balance")
            } else if reader.key(__key, is: "memo") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "memo")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("balance")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("memo")
        }
        self.balance = __v0
        self.memo = __v1
    }
}

// Ledger.swift: Ledger.State

extension Ledger.State {
    typealias __WireType0 = TrackedDictionary<Int, Ledger.Account>
    typealias __WireType1 = Int
}

extension Ledger.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("accounts");
        try writer.encode(self.accounts)
        writer.key("postings");
        try writer.encode(self.postings)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "accounts") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "accounts")
            } else if reader.key(__key, is: "postings") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "postings")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("accounts")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("postings")
        }
        self.accounts = __v0
        self.postings = __v1
    }
}

// Ledger.swift: Ledger.State.Changes

extension Ledger.State.Changes {
    typealias __WireType0 = TrackedDictionary<Int, Ledger.Account>.Changes
    typealias __WireType1 = Int
}

extension Ledger.State.Changes: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("accounts");
        try writer.encode(self.accounts)
        writer.key("postings");
        try writer.encode(self.postings)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "accounts") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "accounts")
            } else if reader.key(__key, is: "postings") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "postings")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("accounts")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("postings")
        }
        self.accounts = __v0
        self.postings = __v1
    }
}

// Ledger.swift: Ledger.Action

extension Ledger.Action {
    typealias __WireType0 = Int
    typealias __WireType1 = Int
    typealias __WireType2 = Int
    typealias __WireType3 = String
    typealias __WireType4 = Int
}

extension Ledger.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .open(let __a0):
            let __outer = writer.beginMap()
            writer.key("open")
            let __map = writer.beginMap()
    writer.key("count");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .post(let __a0, let __a1, let __a2):
            let __outer = writer.beginMap()
            writer.key("post")
            let __map = writer.beginMap()
    writer.key("account");
            try writer.encode(__a0)
    writer.key("amount");
            try writer.encode(__a1)
    writer.key("memo");
            try writer.encode(__a2)
    writer.end(__map, count: 3)
            writer.end(__outer, count: 1)
        case .close(let __a0):
            let __outer = writer.beginMap()
            writer.key("close")
            let __map = writer.beginMap()
    writer.key("account");
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
            if reader.key(__key, is: "open") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "post") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "close") {
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
            do {
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
                self = .open(count: __v0)
            }
        case 1:
            do {
                var __f0: Self.__WireType1? = nil
        var __f1: Self.__WireType2? = nil
        var __f2: Self.__WireType3? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "account") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "account")
            } else if reader.key(__key, is: "amount") {
                __f1 = try reader.decode(Self.__WireType2.self, forKey: "amount")
            } else if reader.key(__key, is: "memo") {
                __f2 = try reader.decode(Self.__WireType3.self, forKey: "memo")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("account")
                }
        guard let __v1 = __f1 else {
                    throw reader.missing("amount")
                }
        guard let __v2 = __f2 else {
                    throw reader.missing("memo")
                }
                self = .post(account: __v0, amount: __v1, memo: __v2)
            }
        case 2:
            do {
                var __f0: Self.__WireType4? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "account") {
                __f0 = try reader.decode(Self.__WireType4.self, forKey: "account")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("account")
                }
                self = .close(account: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}

// Login.swift: Login.State

extension Login.State {
    typealias __WireType0 = String
    typealias __WireType1 = String
    typealias __WireType2 = Bool
    typealias __WireType3 = String
    typealias __WireType4 = String
}

extension Login.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("username");
        try writer.encode(self.username)
        writer.key("password");
        try writer.encode(self.password)
        writer.key("isLoggingIn");
        try writer.encode(self.isLoggingIn)
        if let __value = self.loggedInAs {
            writer.key("loggedInAs");
            try writer.encode(__value);
            __present += 1
        }
        if let __value = self.error {
            writer.key("error");
            try writer.encode(__value);
            __present += 1
        }
        writer.end(__map, count: 3 + __present)
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
            if reader.key(__key, is: "username") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "username")
            } else if reader.key(__key, is: "password") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "password")
            } else if reader.key(__key, is: "isLoggingIn") {
                __f2 = try reader.decode(Self.__WireType2.self, forKey: "isLoggingIn")
            } else if reader.key(__key, is: "loggedInAs") {
                __f3 = try reader.decodeIfPresent(Self.__WireType3.self, forKey: "loggedInAs")
            } else if reader.key(__key, is: "error") {
                __f4 = try reader.decodeIfPresent(Self.__WireType4.self, forKey: "error")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("username")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("password")
        }
        guard let __v2 = __f2 else {
            throw reader.missing("isLoggingIn")
        }
        let __v3 = __f3
        let __v4 = __f4
        self.username = __v0
        self.password = __v1
        self.isLoggingIn = __v2
        self.loggedInAs = __v3
        self.error = __v4
    }
}

// Login.swift: Login.Action

extension Login.Action {
    typealias __WireType0 = String
    typealias __WireType1 = String
    typealias __WireType2 = String
    typealias __WireType3 = String
}

extension Login.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .usernameChanged(let __a0):
            let __outer = writer.beginMap()
            writer.key("usernameChanged")
            let __map = writer.beginMap()
    writer.key("username");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .passwordChanged(let __a0):
            let __outer = writer.beginMap()
            writer.key("passwordChanged")
            let __map = writer.beginMap()
    writer.key("password");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .loginTapped:
            let __outer = writer.beginMap()
            writer.key("loginTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .loginSucceeded(let __a0):
            let __outer = writer.beginMap()
            writer.key("loginSucceeded")
            let __map = writer.beginMap()
    writer.key("user");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .loginFailed(let __a0):
            let __outer = writer.beginMap()
            writer.key("loginFailed")
            let __map = writer.beginMap()
    writer.key("reason");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .logoutTapped:
            let __outer = writer.beginMap()
            writer.key("logoutTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .sessionExpired:
            let __outer = writer.beginMap()
            writer.key("sessionExpired")
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
            if reader.key(__key, is: "usernameChanged") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "passwordChanged") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loginTapped") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loginSucceeded") {
                __case = 3;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loginFailed") {
                __case = 4;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "logoutTapped") {
                __case = 5;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "sessionExpired") {
                __case = 6;
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
            if reader.key(__key, is: "username") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "username")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("username")
                }
                self = .usernameChanged(username: __v0)
            }
        case 1:
            do {
                var __f0: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "password") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "password")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("password")
                }
                self = .passwordChanged(password: __v0)
            }
        case 2:
            try reader.end(try reader.beginMap())
            self = .loginTapped
        case 3:
            do {
                var __f0: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "user") {
                __f0 = try reader.decode(Self.__WireType2.self, forKey: "user")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("user")
                }
                self = .loginSucceeded(user: __v0)
            }
        case 4:
            do {
                var __f0: Self.__WireType3? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "reason") {
                __f0 = try reader.decode(Self.__WireType3.self, forKey: "reason")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("reason")
                }
                self = .loginFailed(reason: __v0)
            }
        case 5:
            try reader.end(try reader.beginMap())
            self = .logoutTapped
        case 6:
            try reader.end(try reader.beginMap())
            self = .sessionExpired
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}

// Primes.swift: Primes.Favorite

extension Primes.Favorite {
    typealias __WireType0 = Int
    typealias __WireType1 = Date
}

extension Primes.Favorite: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("prime");
        try writer.encode(self.prime)
        writer.key("savedAt");
        try writer.encode(self.savedAt)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "prime") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "prime")
            } else if reader.key(__key, is: "savedAt") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "savedAt")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("prime")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("savedAt")
        }
        self.prime = __v0
        self.savedAt = __v1
    }
}

// Primes.swift: Primes.State

extension Primes.State {
    typealias __WireType0 = Int
    typealias __WireType1 = [Primes.Favorite]
    typealias __WireType2 = Bool
    typealias __WireType3 = String
    typealias __WireType4 = Bool
}

extension Primes.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("count");
        try writer.encode(self.count)
        writer.key("favorites");
        try writer.encode(self.favorites)
        writer.key("isNthPrimeRequestInFlight");
        try writer.encode(self.isNthPrimeRequestInFlight)
        if let __value = self.alert {
            writer.key("alert");
            try writer.encode(__value);
            __present += 1
        }
        writer.key("favoritesLoaded");
        try writer.encode(self.favoritesLoaded)
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
            if reader.key(__key, is: "count") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "count")
            } else if reader.key(__key, is: "favorites") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "favorites")
            } else if reader.key(__key, is: "isNthPrimeRequestInFlight") {
                __f2 = try reader.decode(Self.__WireType2.self, forKey: "isNthPrimeRequestInFlight")
            } else if reader.key(__key, is: "alert") {
                __f3 = try reader.decodeIfPresent(Self.__WireType3.self, forKey: "alert")
            } else if reader.key(__key, is: "favoritesLoaded") {
                __f4 = try reader.decode(Self.__WireType4.self, forKey: "favoritesLoaded")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("count")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("favorites")
        }
        guard let __v2 = __f2 else {
            throw reader.missing("isNthPrimeRequestInFlight")
        }
        let __v3 = __f3
        guard let __v4 = __f4 else {
            throw reader.missing("favoritesLoaded")
        }
        self.count = __v0
        self.favorites = __v1
        self.isNthPrimeRequestInFlight = __v2
        self.alert = __v3
        self.favoritesLoaded = __v4
    }
}

// Primes.swift: Primes.Action

extension Primes.Action {
    typealias __WireType0 = Int
    typealias __WireType1 = Int
    typealias __WireType2 = Int
    typealias __WireType3 = [Primes.Favorite]
}

extension Primes.Action: WireEncodable, WireDecodable {
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
        case .nthPrimeTapped:
            let __outer = writer.beginMap()
            writer.key("nthPrimeTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .nthPrimeResponse(let __a0, let __a1):
            let __outer = writer.beginMap()
            writer.key("nthPrimeResponse")
            let __map = writer.beginMap()
    var __present = 0
    writer.key("n");
            try writer.encode(__a0)
    if let __value = __a1 {
                writer.key("prime");
                try writer.encode(__value);
                __present += 1
            }
    writer.end(__map, count: 1 + __present)
            writer.end(__outer, count: 1)
        case .alertDismissed:
            let __outer = writer.beginMap()
            writer.key("alertDismissed")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .favoriteToggled:
            let __outer = writer.beginMap()
            writer.key("favoriteToggled")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .favoriteRemoved(let __a0):
            let __outer = writer.beginMap()
            writer.key("favoriteRemoved")
            let __map = writer.beginMap()
    writer.key("prime");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .loadFavoritesTapped:
            let __outer = writer.beginMap()
            writer.key("loadFavoritesTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .favoritesLoaded(let __a0):
            let __outer = writer.beginMap()
            writer.key("favoritesLoaded")
            let __map = writer.beginMap()
    writer.key("favorites");
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
            if reader.key(__key, is: "incrementTapped") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "decrementTapped") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "nthPrimeTapped") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "nthPrimeResponse") {
                __case = 3;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "alertDismissed") {
                __case = 4;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "favoriteToggled") {
                __case = 5;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "favoriteRemoved") {
                __case = 6;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loadFavoritesTapped") {
                __case = 7;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "favoritesLoaded") {
                __case = 8;
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
            try reader.end(try reader.beginMap())
            self = .nthPrimeTapped
        case 3:
            do {
                var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "n") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "n")
            } else if reader.key(__key, is: "prime") {
                __f1 = try reader.decodeIfPresent(Self.__WireType1.self, forKey: "prime")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("n")
                }
        let __v1 = __f1
                self = .nthPrimeResponse(n: __v0, prime: __v1)
            }
        case 4:
            try reader.end(try reader.beginMap())
            self = .alertDismissed
        case 5:
            try reader.end(try reader.beginMap())
            self = .favoriteToggled
        case 6:
            do {
                var __f0: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "prime") {
                __f0 = try reader.decode(Self.__WireType2.self, forKey: "prime")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("prime")
                }
                self = .favoriteRemoved(prime: __v0)
            }
        case 7:
            try reader.end(try reader.beginMap())
            self = .loadFavoritesTapped
        case 8:
            do {
                var __f0: Self.__WireType3? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "favorites") {
                __f0 = try reader.decode(Self.__WireType3.self, forKey: "favorites")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("favorites")
                }
                self = .favoritesLoaded(favorites: __v0)
            }
        default:
            throw reader.caseCount(Self.self)
        }
        reader.offset = __end
    }
}

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

// Todo.swift: Todo.Item

extension Todo.Item {
    typealias __WireType0 = String
    typealias __WireType1 = Bool
}

extension Todo.Item: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        writer.key("title");
        try writer.encode(self.title)
        writer.key("done");
        try writer.encode(self.done)
        writer.end(__map, count: 2)
    }

    public init(wireReader reader: inout FluxCore.WireReader) throws {
        var __f0: Self.__WireType0? = nil
        var __f1: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "title") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "title")
            } else if reader.key(__key, is: "done") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "done")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("title")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("done")
        }
        self.title = __v0
        self.done = __v1
    }
}

// Todo.swift: Todo.State

extension Todo.State {
    typealias __WireType0 = [Todo.Item]
    typealias __WireType1 = Bool
    typealias __WireType2 = String
}

extension Todo.State: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        let __map = writer.beginMap()
        var __present = 0
        writer.key("todos");
        try writer.encode(self.todos)
        writer.key("isLoading");
        try writer.encode(self.isLoading)
        if let __value = self.loadError {
            writer.key("loadError");
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
            if reader.key(__key, is: "todos") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "todos")
            } else if reader.key(__key, is: "isLoading") {
                __f1 = try reader.decode(Self.__WireType1.self, forKey: "isLoading")
            } else if reader.key(__key, is: "loadError") {
                __f2 = try reader.decodeIfPresent(Self.__WireType2.self, forKey: "loadError")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
            throw reader.missing("todos")
        }
        guard let __v1 = __f1 else {
            throw reader.missing("isLoading")
        }
        let __v2 = __f2
        self.todos = __v0
        self.isLoading = __v1
        self.loadError = __v2
    }
}

// Todo.swift: Todo.Action

extension Todo.Action {
    typealias __WireType0 = String
    typealias __WireType1 = Int
    typealias __WireType2 = Int
    typealias __WireType3 = [Todo.Item]
    typealias __WireType4 = String
}

extension Todo.Action: WireEncodable, WireDecodable {
    public func wireEncode(to writer: inout FluxCore.WireWriter) throws {
        switch self {
        case .addTodo(let __a0):
            let __outer = writer.beginMap()
            writer.key("addTodo")
            let __map = writer.beginMap()
    writer.key("title");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .toggleTodo(let __a0):
            let __outer = writer.beginMap()
            writer.key("toggleTodo")
            let __map = writer.beginMap()
    writer.key("index");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .removeTodo(let __a0):
            let __outer = writer.beginMap()
            writer.key("removeTodo")
            let __map = writer.beginMap()
    writer.key("index");
            try writer.encode(__a0)
    writer.end(__map, count: 1)
            writer.end(__outer, count: 1)
        case .clearCompleted:
            let __outer = writer.beginMap()
            writer.key("clearCompleted")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .loadTapped:
            let __outer = writer.beginMap()
            writer.key("loadTapped")
            let __map = writer.beginMap()
    writer.end(__map, count: 0)
            writer.end(__outer, count: 1)
        case .todosLoaded(let __a0):
            let __outer = writer.beginMap()
            writer.key("todosLoaded")
            let __map = writer.beginMap()
    writer.key("todos");
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
            if reader.key(__key, is: "addTodo") {
                __case = 0;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "toggleTodo") {
                __case = 1;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "removeTodo") {
                __case = 2;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "clearCompleted") {
                __case = 3;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loadTapped") {
                __case = 4;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "todosLoaded") {
                __case = 5;
                __known += 1;
                __at = reader.offset
            } else if reader.key(__key, is: "loadFailed") {
                __case = 6;
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
            if reader.key(__key, is: "title") {
                __f0 = try reader.decode(Self.__WireType0.self, forKey: "title")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("title")
                }
                self = .addTodo(title: __v0)
            }
        case 1:
            do {
                var __f0: Self.__WireType1? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "index") {
                __f0 = try reader.decode(Self.__WireType1.self, forKey: "index")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("index")
                }
                self = .toggleTodo(index: __v0)
            }
        case 2:
            do {
                var __f0: Self.__WireType2? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "index") {
                __f0 = try reader.decode(Self.__WireType2.self, forKey: "index")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("index")
                }
                self = .removeTodo(index: __v0)
            }
        case 3:
            try reader.end(try reader.beginMap())
            self = .clearCompleted
        case 4:
            try reader.end(try reader.beginMap())
            self = .loadTapped
        case 5:
            do {
                var __f0: Self.__WireType3? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "todos") {
                __f0 = try reader.decode(Self.__WireType3.self, forKey: "todos")
            } else {
        try reader.skipValue()
    }
        }
        try reader.end(__map)
        guard let __v0 = __f0 else {
                    throw reader.missing("todos")
                }
                self = .todosLoaded(todos: __v0)
            }
        case 6:
            do {
                var __f0: Self.__WireType4? = nil
        let __map = try reader.beginMap()
        for _ in 0 ..< __map.count {
            let __key = try reader.readKey()
            if reader.key(__key, is: "reason") {
                __f0 = try reader.decode(Self.__WireType4.self, forKey: "reason")
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
