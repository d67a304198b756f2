// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Ledger.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

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
