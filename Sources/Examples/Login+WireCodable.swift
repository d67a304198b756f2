// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Login.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

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
