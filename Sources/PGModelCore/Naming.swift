/// Swift names to PostgreSQL names.
///
/// ```swift
/// Naming.snakeCase("BucketListItem")  // "bucket_list_item"
/// Naming.snakeCase("startDate")       // "start_date"
/// Naming.snakeCase("userID")          // "user_id"
/// ```
public enum Naming {
    /// snake_case of a camelCase or PascalCase name; runs of capitals stay one word (`userID` → `user_id`).
    public static func snakeCase(_ name: String) -> String {
        let chars = Array(name)
        var out = ""
        for (i, c) in chars.enumerated() {
            if c.isUppercase {
                let prevLower = i > 0 && (chars[i - 1].isLowercase || chars[i - 1].isNumber)
                let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
                let prevUpper = i > 0 && chars[i - 1].isUppercase
                if i > 0 && (prevLower || (prevUpper && nextLower)) { out.append("_") }
                out.append(contentsOf: c.lowercased())
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// A Swift-style identifier: letters, digits and underscores, not starting with a digit, at most 63 bytes
    /// (PostgreSQL's identifier limit).
    public static func isValidIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63 else { return false }
        guard first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// `name` if it fits PostgreSQL's 63-byte identifier limit; otherwise a prefix and a short FNV-1a hash of
    /// the whole name, so two long names stay distinct and the result is the same in every process.
    public static func shortened(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt32 = 2166136261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16777619 }
        let tag = String(hash, radix: 16)
        return String(decoding: name.utf8.prefix(63 - tag.count - 1), as: UTF8.self) + "_" + tag
    }

    /// A double-quoted SQL identifier. Callers pass only names from a validated schema; quoting
    /// makes reserved words (`user`, `order`) safe as table and column names.
    public static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

import Foundation
