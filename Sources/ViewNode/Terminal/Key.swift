/// A key press, decoded from the bytes a terminal sends in raw mode.
public enum Key: Equatable, Sendable {
    case character(Character)
    case enter, backspace, tab, escape, up, down, left, right, delete
    case pageUp, pageDown, home, end, f1
    case control(Character)

    /// Decodes every key in `bytes` (several may arrive in one read).
    public static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case 0x1B:
                if i + 2 < bytes.count && bytes[i + 1] == 0x4F {
                    // SS3: F1 and, in application mode, Home/End.
                    switch bytes[i + 2] {
                    case 0x50: keys.append(.f1)
                    case 0x48: keys.append(.home)
                    case 0x46: keys.append(.end)
                    default: break
                    }
                    i += 3
                    continue
                }
                if i + 2 < bytes.count && bytes[i + 1] == 0x5B {
                    switch bytes[i + 2] {
                    case 0x41: keys.append(.up)
                    case 0x42: keys.append(.down)
                    case 0x43: keys.append(.right)
                    case 0x44: keys.append(.left)
                    case 0x48: keys.append(.home)
                    case 0x46: keys.append(.end)
                    case let digit where (0x31...0x36).contains(digit) && i + 3 < bytes.count && bytes[i + 3] == 0x7E:
                        // ESC [ n ~: 1 Home, 3 Delete, 4 End, 5 Page Up, 6 Page Down.
                        let named: [UInt8: Key] = [0x31: .home, 0x33: .delete, 0x34: .end, 0x35: .pageUp, 0x36: .pageDown]
                        if let key = named[digit] { keys.append(key) }
                        i += 1
                    case 0x31 where i + 4 < bytes.count && bytes[i + 3] == 0x31 && bytes[i + 4] == 0x7E:
                        keys.append(.f1)  // ESC [ 1 1 ~
                        i += 2
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
