// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in AnnotationFilter.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

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
