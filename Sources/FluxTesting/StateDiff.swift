import Foundation

/// A readable, line-by-line difference of two values, through their JSON form (states are Codable).
enum StateDiff {
    static func lines<T: Encodable>(_ value: T) -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return [String(describing: value)] }
        return String(decoding: data, as: UTF8.self).components(separatedBy: "\n")
    }

    /// `−` lines are expected but missing, `+` lines are there but not expected, others are context.
    static func describe<T: Encodable>(expected: T, actual: T) -> String {
        let a = lines(expected), b = lines(actual)
        // Longest common subsequence over lines: states in tests are small.
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                table[i][j] = a[i] == b[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count && j < b.count && a[i] == b[j] {
                out.append("  " + a[i]); i += 1; j += 1
            } else if j < b.count && (i == a.count || table[i][j + 1] >= table[i + 1][j]) {
                out.append("+ " + b[j]); j += 1
            } else {
                out.append("− " + a[i]); i += 1
            }
        }
        return out.joined(separator: "\n")
    }
}
