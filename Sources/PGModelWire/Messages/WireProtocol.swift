/// Constants both ends of the line protocol agree on.
///
/// ```swift
/// let hello = HelloPayload(user: "alice", password: "secret", protocolVersion: WireProtocol.version)
/// ```
public enum WireProtocol {
    /// The protocol version this build speaks; `hello` carries it as `"protocol"`.
    public static let version = 1
    /// What the server reports in its `hello` response.
    public static let serverName = "pgmodel/0.1"
    /// The default TCP port of the service.
    public static let defaultPort = 7432
    /// The default longest line (request or response) in bytes, not counting the `"\n"`: 1 MiB.
    public static let defaultMaxLineBytes = 1 << 20
    /// The longest string `id` a request may carry, in UTF-8 bytes.
    public static let maxStringIDBytes = 256
    /// The longest user name `hello` may carry, in characters (the length `pgmodel.users` allows); a
    /// longer one is refused with `invalid_field` before any password check or login throttle sees it.
    public static let maxUserNameCharacters = 128
    /// The longest password `hello` may carry, in UTF-8 bytes (bcrypt reads only the first 72); a
    /// longer one is refused with `invalid_field` before any password check.
    public static let maxPasswordBytes = 1_024
    /// The values a request's `timeoutMs` may take: 1 ms to 24 hours.
    public static let timeoutMillisecondsRange: ClosedRange<Int64> = 1...86_400_000
    /// The longest `traceparent` a request may carry, in UTF-8 bytes: W3C Trace Context's version 00 takes
    /// 55, and later versions may only append. Longer ones are refused with `invalid_field`.
    public static let maxTraceParentBytes = 128
    /// The longest `tracestate` a request may carry, in UTF-8 bytes: W3C Trace Context asks vendors to
    /// pass on at least 512. Longer ones are refused with `invalid_field`.
    public static let maxTraceStateBytes = 512
}
