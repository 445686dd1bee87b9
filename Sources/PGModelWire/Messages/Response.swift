/// One response line: the request's ``id`` (`null` when the request line could not be parsed far
/// enough to find it) and either result fields (`"ok":true`) or an error (`"ok":false`).
///
/// ```swift
/// let ok = Response(id: 1, .pong)
/// // {"id":1,"ok":true,"pong":true}
/// let failed = Response(id: 3, error: WireError(.unknownOp, "unknown op 'nonsense'"))
/// // {"error":{"code":"unknown_op","message":"unknown op 'nonsense'"},"id":3,"ok":false}
/// ```
@_spi(PGModelInternals) public struct Response: Hashable, Sendable {
    /// The id of the request this answers.
    public var id: RequestID?
    /// The result, or the error with its stable code.
    public var result: Result<ResponseResult, WireError>

    public init(id: RequestID?, result: Result<ResponseResult, WireError>) {
        self.id = id
        self.result = result
    }

    /// A successful response.
    public init(id: RequestID?, _ result: ResponseResult) {
        self.init(id: id, result: .success(result))
    }

    /// A failed response.
    public init(id: RequestID?, error: WireError) {
        self.init(id: id, result: .failure(error))
    }

    /// `true` for `"ok":true`.
    public var isSuccess: Bool {
        if case .success = result { return true } else { return false }
    }
}
