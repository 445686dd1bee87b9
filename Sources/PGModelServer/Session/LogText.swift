@_spi(PGModelInternals) import PGModelWire
/// Client-supplied text made safe for a log line: control characters (a newline would start a forged
/// line), backslashes and quotes are escaped, and the text is cut to a bounded length.
///
/// ```swift
/// logger.notice("login failed", metadata: ["user": "\(LogText(hello.user))"])
/// // "alice\nFAKE" is logged as alice\nFAKE: one line
/// ```
@_spi(PGModelInternals) public struct LogText: CustomStringConvertible, Sendable {
    /// The most characters of the original text kept; longer text ends with `…`.
    public static let maximumCharacters = 200

    /// The escaped text.
    public let description: String

    /// Escapes `text` and cuts it to ``maximumCharacters``.
    public init(_ text: String) {
        var escaped = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == Self.maximumCharacters {
                escaped += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            default:
                // C0, DEL, C1 controls and the Unicode line and paragraph separators.
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    escaped += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        description = escaped
    }
}
