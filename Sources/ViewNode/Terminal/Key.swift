/// A key press, decoded from the bytes a terminal sends in raw mode.
public enum Key: Equatable, Sendable {
    case character(Character)
    case enter, backspace, tab, escape, up, down, left, right, delete
    case control(Character)

    /// Decodes every key in `bytes` (several may arrive in one read).
    public static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case 0x1B:
                if i + 2 < bytes.count && bytes[i + 1] == 0x5B {
                    switch bytes[i + 2] {
                    case 0x41: keys.append(.up)
                    case 0x42: keys.append(.down)
                    case 0x43: keys.append(.right)
                    case 0x44: keys.append(.left)
                    case 0x33 where i + 3 < bytes.count && bytes[i + 3] == 0x7E:
                        keys.append(.delete)
                        i += 1
                    default: break
                    }
                    i += 3
                    continue
                }
                keys.append(.escape)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            case 0x01...0x1A: keys.append(.control(Character(UnicodeScalar(b + 0x60))))
            default:
                // UTF-8: take the whole scalar.
                let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
                let end = min(bytes.count, i + length)
                if let text = String(bytes: bytes[i..<end], encoding: .utf8), let c = text.first { keys.append(.character(c)) }
                i = end
                continue
            }
            i += 1
        }
        return keys
    }
}
