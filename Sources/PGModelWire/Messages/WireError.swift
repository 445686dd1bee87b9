@_spi(PGModelInternals) import PGModelCore

/// The `error` object of a failed response: a stable ``code`` (a ``PGModelError/Code`` raw value) and a
/// message for people, plus the protocol field, model, key path or SQLSTATE involved when known.
///
/// ```swift
/// let error = WireError(.unknownOp, "unknown op 'nonsense'")
/// // {"code":"unknown_op","message":"unknown op 'nonsense'"}
/// ```
@_spi(PGModelInternals) public struct WireError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The stable code.
    public var code: PGModelError.Code
    /// A sentence for people; never contains bound values or passwords.
    public var message: String
    /// The request field a protocol error is about, as a path: `limit`, `inserts[0].id`, `where.eq[1]`.
    public var field: String?
    /// The model (entity) involved, if any.
    public var model: String?
    /// The key path or attribute involved, if any.
    public var keyPath: String?
    /// PostgreSQL's SQLSTATE, when the database raised the error.
    public var sqlState: String?
    /// For `save_conflict`: each model someone else changed or deleted, with the values on both sides.
    public var conflicts: [SaveConflict] = []
    /// The id the server gave the request (`"requestID"`): its request line in the server's log carries
    /// the same id. Sent in every error answer of a server that logs requests; nil in older ones.
    ///
    /// ```swift
    /// // {"code":"not_found","message":"…","requestID":"5f0c2a9e41d7-12"}
    /// ```
    public var requestID: String?

    public init(
        _ code: PGModelError.Code, _ message: String, field: String? = nil, model: String? = nil,
        keyPath: String? = nil, sqlState: String? = nil
    ) {
        self.code = code
        self.message = message
        self.field = field
        self.model = model
        self.keyPath = keyPath
        self.sqlState = sqlState
    }

    /// The wire form of an error the store raised.
    ///
    /// ```swift
    /// WireError(PGModelError(.forbidden, "Trip 0193… belongs to another user", model: "Trip"))
    /// ```
    public init(_ error: PGModelError) {
        self.init(error.code, error.message, model: error.model, keyPath: error.keyPath, sqlState: error.sqlState)
        conflicts = error.conflicts
    }

    /// The error a client throws for this response; `field` becomes the key path when none is given.
    ///
    /// ```swift
    /// throw wireError.modelError
    /// ```
    public var modelError: PGModelError {
        var error = PGModelError(code, message, model: model, keyPath: keyPath ?? field, sqlState: sqlState, conflicts: conflicts)
        error.requestID = requestID
        return error
    }

    public var description: String { "\(code.rawValue): \(message)" }

    private enum CodingKeys: String, CodingKey {
        case code, message, field, model, keyPath, sqlState, conflicts, requestID
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        code = PGModelError.Code(rawValue: try c.decode(String.self, forKey: .code))
        message = try c.decode(String.self, forKey: .message)
        field = try c.decodeIfPresent(String.self, forKey: .field)
        model = try c.decodeIfPresent(String.self, forKey: .model)
        keyPath = try c.decodeIfPresent(String.self, forKey: .keyPath)
        sqlState = try c.decodeIfPresent(String.self, forKey: .sqlState)
        conflicts = try c.decodeIfPresent([SaveConflict].self, forKey: .conflicts) ?? []
        // Only a label for the logs: a malformed one is dropped rather than failing the answer.
        requestID = (try? c.decodeIfPresent(String.self, forKey: .requestID)) ?? nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code.rawValue, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encodeIfPresent(field, forKey: .field)
        try c.encodeIfPresent(model, forKey: .model)
        try c.encodeIfPresent(keyPath, forKey: .keyPath)
        try c.encodeIfPresent(sqlState, forKey: .sqlState)
        if !conflicts.isEmpty { try c.encode(conflicts, forKey: .conflicts) }
        try c.encodeIfPresent(requestID, forKey: .requestID)
    }
}
