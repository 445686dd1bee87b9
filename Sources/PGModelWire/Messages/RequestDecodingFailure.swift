/// Why a request line could not become a ``Request``: the error to send back and the request's id,
/// which is `nil` when the line could not be parsed far enough to find one.
///
/// ```swift
/// switch Request.decode(line: bytes) {
/// case .success(let request): …
/// case .failure(let failure): reply(Response(id: failure.id, error: failure.error))
/// }
/// ```
@_spi(PGModelInternals) public struct RequestDecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request's id, when the line got that far.
    public var id: RequestID?
    /// What went wrong, with a stable code.
    public var error: WireError

    public init(id: RequestID?, error: WireError) {
        self.id = id
        self.error = error
    }

    public var description: String { "request \(id?.description ?? "null"): \(error)" }
}
