import Logging
@_spi(PGModelInternals) import PGModelWire

/// The fields and levels of the server's access log: one line per request, message `request` (or
/// `audited operation`), fields `request_id` (the server's id, also in the request's error answer), `id`
/// (the client's), `user`, `op`, `code` (`ok` or the error's code) and `ms` (time in the server, with
/// microseconds). A JSON log handler prints them as fields.
///
/// ```swift
/// // info request: request_id=5f0c2a9e41d7-3 id=12 user=alice op=fetch code=ok ms=0.412
/// let level = RequestLog.level(of: .register)   // .notice
/// ```
enum RequestLog {
    /// `notice` for the operations that change tables, access or history (kept with who did them when
    /// the log is turned down to notice); `info` for the rest.
    static func level(of operation: Request.Operation.Name) -> Logger.Level {
        switch operation {
        case .register, .migrate, .share, .unshare, .deleteHistory: .notice
        default: .info
        }
    }

    /// The line's fields; client-chosen text (the client's id, the user's name) is escaped (``LogText``).
    /// Without `elapsed` (an answer of the session's, with no work timed) the line has no `ms`.
    static func metadata(requestID: ServerRequestID?, clientID: RequestID?, user: String?, operation: Request.Operation.Name?,
                         code: String, elapsed: Duration?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["code": "\(code)"]
        if let elapsed { metadata["ms"] = "\(milliseconds(elapsed))" }
        if let requestID { metadata["request_id"] = .stringConvertible(requestID) }
        if let clientID { metadata["id"] = "\(LogText("\(clientID)"))" }
        if let user { metadata["user"] = "\(LogText(user))" }
        if let operation { metadata["op"] = "\(operation.rawValue)" }
        return metadata
    }

    /// `elapsed` in milliseconds with three decimals (`0.412`), written without a formatter.
    static func milliseconds(_ elapsed: Duration) -> String {
        let (seconds, attoseconds) = elapsed.components
        let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
