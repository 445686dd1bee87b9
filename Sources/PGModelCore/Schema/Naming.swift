/// Swift names to PostgreSQL names.
///
/// ```swift
/// Naming.snakeCase("BucketListItem")  // "bucket_list_item"
/// Naming.snakeCase("startDate")       // "start_date"
/// Naming.snakeCase("userID")          // "user_id"
/// ```
@_spi(PGModelInternals) public enum Naming {
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

    /// Whether `key` is a dotted key path (`album.title`) rather than one property's name.
    ///
    /// ```swift
    /// Naming.isDotted("album.title")  // true
    /// ```
    @inlinable
    public static func isDotted(_ key: String) -> Bool {
        // Byte by byte: `String.contains(".")` resolves to Foundation's substring search, which costs
        // more than the rest of checking a key, and the renderer asks for every key of every fetch.
        key.utf8.contains(UInt8(ascii: "."))
    }

    /// A Swift-style identifier: letters, digits and underscores, not starting with a digit, at most 63 bytes
    /// (PostgreSQL's identifier limit).
    public static func isValidIdentifier(_ name: String) -> Bool {
        // Byte by byte: every renderer checks its schema name, so this runs for each statement. ASCII
        // letters are exactly the ASCII scalars whose Unicode property `isAlphabetic` holds.
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 63 else { return false }
        func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        guard first == 0x5F || isLetter(first) else { return false }
        return bytes.allSatisfy { $0 == 0x5F || isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) }
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
        // Identifiers rarely hold a quote: skip Foundation's search-and-replace (a bridged copy) then.
        guard identifier.utf8.contains(0x22) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

import Foundation
