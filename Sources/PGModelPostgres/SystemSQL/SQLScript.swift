/// Splits a SQL script into statements, because PostgresNIO sends every query through the extended
/// protocol, which takes one statement at a time. Understands `--` and `/* */` comments, quoted
/// strings and identifiers, and dollar quoting (`$pgmodel$ … $pgmodel$`), so semicolons inside DO
/// blocks and function bodies do not split.
///
/// ```swift
/// SQLScript.statements("CREATE SCHEMA a; DO $$ BEGIN NULL; END $$;")
/// // ["CREATE SCHEMA a", "DO $$ BEGIN NULL; END $$"]
/// ```
@_spi(PGModelInternals) public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        let chars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var i = 0
        func flush() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        while i < chars.count {
            let c = chars[i]
            let next: Unicode.Scalar? = i + 1 < chars.count ? chars[i + 1] : nil
            if c == "-" && next == "-" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
                continue
            }
            if c == "/" && next == "*" {
                i += 2
                while i + 1 < chars.count && !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                i += 2
                continue
            }
            if c == "'" || c == "\"" {
                current.append(c)
                i += 1
                while i < chars.count {
                    current.append(chars[i])
                    if chars[i] == c {
                        if i + 1 < chars.count && chars[i + 1] == c {
                            current.append(chars[i + 1])
                            i += 2
                            continue
                        }
                        break
                    }
                    i += 1
                }
                i += 1
                continue
            }
            if c == "$", let tagEnd = dollarTagEnd(chars, from: i) {
                let tag = Array(chars[i...tagEnd])
                current.append(contentsOf: tag)
                i = tagEnd + 1
                while i < chars.count {
                    if chars[i] == "$", i + tag.count <= chars.count, Array(chars[i..<(i + tag.count)]) == tag {
                        current.append(contentsOf: tag)
                        i += tag.count
                        break
                    }
                    current.append(chars[i])
                    i += 1
                }
                continue
            }
            if c == ";" {
                flush()
                i += 1
                continue
            }
            current.append(c)
            i += 1
        }
        flush()
        return statements
    }

    /// The index of the closing `$` of a dollar-quote tag starting at `start` (`$$` or `$tag$`), if any.
    private static func dollarTagEnd(_ chars: [Unicode.Scalar], from start: Int) -> Int? {
        var j = start + 1
        while j < chars.count {
            let c = chars[j]
            if c == "$" { return j }
            guard c == "_" || c.properties.isAlphabetic || (j > start + 1 && ("0"..."9").contains(c)) else { return nil }
            j += 1
        }
        return nil
    }
}

import Foundation
