import Foundation

/// A `Date` as people read it in JSON: ISO 8601 in UTC with every digit its `Double` holds
/// (`2026-11-29T07:24:41.1234567Z`), so the text reads back to the very same `Date`; and the reading
/// of such a text, or of one a person types (fewer digits, a `+01:00` offset).
///
/// Exact by construction: the seconds since 2001 split into whole seconds and a fraction (both exact in
/// a `Double`), the fraction printed in its shortest form that reads back to it, and read back the two
/// are added again, which gives the `Double` they came from since it is representable.
package enum DateText {
    /// Seconds from 1970 to 2001, Foundation's reference date.
    static let referenceFrom1970: Int64 = 978_307_200
    /// Past this many seconds from 2001 (about 31 million years) a date is written as its number.
    static let largest: Double = 1e15

    /// The ISO 8601 text of `date`; nil for a date no year between 1 and 9999 holds, and for one within
    /// half a second before 2001, whose fraction of a second past 2000-12-31T23:59:59 no `Double` holds
    /// exactly (everywhere else `seconds - whole` is exact, by Sterbenz's lemma).
    package static func string(_ date: Date) -> String? {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < largest, !(seconds > -0.5 && seconds < 0) else { return nil }
        let whole = seconds.rounded(.down)
        let fraction = seconds - whole
        precondition(fraction >= 0 && fraction < 1, "the fraction of a second is exact")
        let unix = Int64(whole) + referenceFrom1970
        let days = unix >= 0 ? unix / 86_400 : (unix - 86_399) / 86_400
        let second = unix - days * 86_400
        let (year, month, day) = civil(days)
        guard (1...9999).contains(year) else { return nil }
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: 4 - String(year).count) + String(year)
        var text = "\(yearText)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))"
        if fraction > 0 { text += "." + fractionDigits(fraction) }
        return text + "Z"
    }

    /// The `Date` of an ISO 8601 text (`YYYY-MM-DDTHH:MM:SS`, a fraction of any length, `Z` or an offset
    /// `±HH:MM`); nil when it is not one.
    package static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x74, bytes[13] == 0x3A,
            bytes[16] == 0x3A, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24,
            minute < 60, second < 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == 0x2E {
            let start = index + 1
            index = start
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard index > start, let read = Double("0." + String(decoding: bytes[start..<index], as: UTF8.self)) else { return nil }
            fraction = read
        }
        var offset: Int64 = 0
        if index == bytes.count - 1, bytes[index] == 0x5A || bytes[index] == 0x7A {
            offset = 0
        } else if index + 6 == bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D, bytes[index + 3] == 0x3A,
            let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)), hours < 24, minutes < 60
        {
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
        } else {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let unix = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSinceReferenceDate: Double(unix - referenceFrom1970) + fraction)
    }

    /// The digits after "0." of `fraction` (in 0 < fraction < 1), in the shortest form that reads back
    /// to it, never in exponent form.
    static func fractionDigits(_ fraction: Double) -> String {
        precondition(fraction > 0 && fraction < 1)
        let shortest = fraction.description
        guard let e = shortest.firstIndex(where: { $0 == "e" || $0 == "E" }) else {
            return String(shortest.drop { $0 != "." }.dropFirst())
        }
        // d.ddde-N: N - 1 zeros, then the digits.
        let digits = shortest[..<e].filter(\.isNumber)
        let exponent = Int(shortest[shortest.index(after: e)...]) ?? 0
        precondition(exponent < 0)
        return String(repeating: "0", count: -exponent - 1) + digits
    }

    /// Year, month and day of a count of days since 1970-01-01 (proleptic Gregorian).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a date (proleptic Gregorian).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
