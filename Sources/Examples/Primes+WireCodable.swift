// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Primes.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore
import Foundation
import Synchronization

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
