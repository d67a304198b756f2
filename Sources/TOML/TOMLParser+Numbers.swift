// Numbers and dates: what a value that is neither a string, an array nor a table reads as.
extension Parser {
    mutating func numberOrDate() throws(TOMLError) -> TOMLValue {
        let start = at
        while let byte = peek(), isNumberByte(byte) { at += 1 }
        // A date and a time may be parted by one space: "1979-05-27 07:32:00".
        if isDate(start, at), peek() == UInt8(ascii: " "), at + 3 < bytes.count, isDigit(bytes[at + 1]), isDigit(bytes[at + 2]),
            bytes[at + 3] == UInt8(ascii: ":")
        {
            at += 1
            while let byte = peek(), isNumberByte(byte) { at += 1 }
        }
        guard at > start else { throw error("expected a value, found \(describe(bytes[start]))", at: start) }
        let token = String(decoding: bytes[start..<at], as: UTF8.self)
        if let value = dateTime(token) { return .dateTime(value) }
        if let value = integer(token) { return .integer(value) }
        if let value = float(token) { return .float(value) }
        // Quoted in the message, cut at 40 characters: a token may be the rest of a long line.
        let shown = token.count > 40 ? token.prefix(40) + "…" : token
        if token.first?.isLetter == true {
            throw error("'\(shown)' is not a value TOML has: a string goes in quotes (\"\(shown)\")", at: start)
        }
        let digits = token.filter(\.isNumber)
        if token.allSatisfy({ $0.isASCII && ($0.isNumber || "+-_".contains($0)) }), digits.count >= 19, digits.first != "0" {
            throw error("'\(shown)' is not a whole number TOML can hold: integers are 64-bit, from -2^63 to 2^63-1", at: start)
        }
        throw error("'\(shown)' is not a value TOML has (a number, a date, a string in quotes, true or false)", at: start)
    }

    func integer(_ token: String) -> Int64? {
        var text = Substring(token)
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where text.hasPrefix(prefix) {
            let digits = text.dropFirst(2)
            guard let cleaned = underscored(digits, radix: radix) else { return nil }
            return Int64(cleaned, radix: radix)
        }
        var negative = false
        if text.first == "+" || text.first == "-" {
            negative = text.first == "-"
            text = text.dropFirst()
        }
        guard let cleaned = underscored(text, radix: 10) else { return nil }
        guard cleaned == "0" || cleaned.first != "0" else { return nil }
        return Int64((negative ? "-" : "") + cleaned)
    }

    func float(_ token: String) -> Double? {
        var text = Substring(token)
        var sign = ""
        if text.first == "+" || text.first == "-" {
            sign = text.first == "-" ? "-" : ""
            text = text.dropFirst()
        }
        if text == "inf" { return sign == "-" ? -.infinity : .infinity }
        if text == "nan" { return .nan }
        // integer part, then a fraction, an exponent, or both.
        let exponentStart = text.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = text[..<(exponentStart ?? text.endIndex)]
        var exponent = ""
        if let exponentStart {
            var rest = text[text.index(after: exponentStart)...]
            var expSign = ""
            if let first = rest.first, first == "+" || first == "-" {
                expSign = String(first)
                rest = rest.dropFirst()
            }
            guard let digits = underscored(rest, radix: 10) else { return nil }
            exponent = "e" + expSign + digits
        }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = underscored(parts[0], radix: 10), whole == "0" || whole.first != "0" else { return nil }
        var fraction = ""
        if parts.count == 2 {
            guard let digits = underscored(parts[1], radix: 10) else { return nil }
            fraction = "." + digits
        }
        guard !fraction.isEmpty || !exponent.isEmpty else { return nil }
        return Double(sign + whole + fraction + exponent)
    }

    /// The digits of `text` without their underscores, each underscore standing between two digits;
    /// nil when that does not hold or a character is not a digit of `radix`.
    func underscored(_ text: Substring, radix: Int) -> String? {
        var out = ""
        var previousWasDigit = false
        for character in text {
            if character == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
            } else {
                guard character.isASCII, character.hexDigitValue.map({ $0 < radix }) == true else { return nil }
                out.append(character)
                previousWasDigit = true
            }
        }
        return previousWasDigit ? out : nil
    }

    /// A date-time, date or time that TOML allows, normalized with `T` between date and time.
    func dateTime(_ token: String) -> String? {
        let scalars = Array(token.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[from..<from + count] {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        /// The length of a valid time at `from` (hh:mm:ss with an optional fraction), or nil.
        func time(_ from: Int) -> Int? {
            guard let hour = number(from, 2), hour < 24, scalars.count > from + 2, scalars[from + 2] == UInt8(ascii: ":"),
                let minute = number(from + 3, 2), minute < 60, scalars.count > from + 5, scalars[from + 5] == UInt8(ascii: ":"),
                let second = number(from + 6, 2), second <= 60
            else { return nil }
            var end = from + 8
            if end < scalars.count, scalars[end] == UInt8(ascii: ".") {
                end += 1
                let digitsStart = end
                while end < scalars.count, isDigit(scalars[end]) { end += 1 }
                guard end > digitsStart else { return nil }
            }
            return end - from
        }
        if let length = time(0) { return length == scalars.count ? token : nil }
        guard let year = number(0, 4), scalars.count >= 10, scalars[4] == UInt8(ascii: "-"), let month = number(5, 2),
            scalars[7] == UInt8(ascii: "-"), let day = number(8, 2), (1...12).contains(month), day >= 1
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day <= days else { return nil }
        if scalars.count == 10 { return token }
        let separator = scalars[10]
        guard separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " "),
            let length = time(11)
        else { return nil }
        var end = 11 + length
        if end < scalars.count {
            if scalars[end] == UInt8(ascii: "Z") || scalars[end] == UInt8(ascii: "z") {
                end += 1
            } else if scalars[end] == UInt8(ascii: "+") || scalars[end] == UInt8(ascii: "-") {
                guard let hours = number(end + 1, 2), hours < 24, end + 3 < scalars.count, scalars[end + 3] == UInt8(ascii: ":"),
                    let minutes = number(end + 4, 2), minutes < 60
                else { return nil }
                end += 6
            }
        }
        guard end == scalars.count else { return nil }
        return String(token.prefix(10)) + "T" + String(token.dropFirst(11))
    }
}
