import Foundation
import Logging

/// `pgmodel serve --log-format json`: one JSON object per line on standard error, the event's metadata as
/// fields next to `time`, `level`, `label` and `message`, for log pipelines that read fields (Loki,
/// Elasticsearch, CloudWatch). Nested metadata (lists, dictionaries) stays nested.
///
/// ```swift
/// LoggingSystem.bootstrap { label in JSONLogHandler(label: label, logLevel: .info) }
/// // {"code":"ok","label":"pgmodel.server","level":"info","message":"request","ms":"0.412","op":"fetch",…}
/// ```
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let own = event.metadata { fields.merge(own) { _, new in new } }
        fields["time"] = .string(Date().formatted(.iso8601))
        fields["level"] = .string(event.level.rawValue)
        fields["label"] = .string(label)
        fields["message"] = .string(event.message.description)
        var line = Self.object(fields)
        line.append("\n")
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// `fields` as a JSON object, keys sorted.
    static func object(_ fields: Logger.Metadata) -> String {
        "{" + fields.sorted { $0.key < $1.key }.map { "\(quoted($0.key)):\(value($0.value))" }.joined(separator: ",") + "}"
    }

    private static func value(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .stringConvertible(let convertible): quoted(convertible.description)
        case .array(let values): "[" + values.map(Self.value).joined(separator: ",") + "]"
        case .dictionary(let fields): object(fields)
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
