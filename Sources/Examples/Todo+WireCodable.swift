// swift-format-ignore-file
// Generated: what `@WireCodable` writes for the types in Todo.swift marked `// @WireCodable`, so that
// the examples, and the stock binary, build without the macro (swift-syntax). Do not edit: after changing
// a marked type, `make expand-macros` writes this file again; WireCodableExpansionTests (Tests/FluxMacrosTests)
// fails while it differs from what the macro writes.

import FluxCore

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
