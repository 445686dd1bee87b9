/// Every error PGModel throws: a stable, matchable ``code`` and a message that names the model,
/// key path or SQL state involved. Bound values never appear in ``description``.
///
/// ```swift
/// do { try context.save() }
/// catch let error as PGModelError where error.code == .uniqueViolation { … }
/// ```
public struct PGModelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code; its raw value is the `code` the line protocol sends.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A `#Predicate` construct PGModel cannot translate to SQL.
        public static let unsupportedPredicate = Code(rawValue: "unsupported_predicate")
        /// A sort key PGModel cannot translate.
        public static let unsupportedSort = Code(rawValue: "unsupported_sort")
        /// A value whose type does not match the attribute.
        public static let typeMismatch = Code(rawValue: "type_mismatch")
        /// A write that breaks a uniqueness constraint (SQLSTATE 23505) and could not be merged.
        public static let uniqueViolation = Code(rawValue: "unique_violation")
        /// A write that breaks another constraint: not-null, foreign key, check.
        public static let constraintViolation = Code(rawValue: "constraint_violation")
        /// An entity that the schema does not contain.
        public static let unknownEntity = Code(rawValue: "unknown_entity")
        /// An attribute that the entity does not contain.
        public static let unknownAttribute = Code(rawValue: "unknown_attribute")
        /// A schema description that cannot be turned into tables.
        public static let invalidSchema = Code(rawValue: "invalid_schema")
        /// A configuration or URL PGModel cannot use.
        public static let invalidConfiguration = Code(rawValue: "invalid_configuration")
        /// The store could not be reached or the connection broke.
        public static let connectionFailed = Code(rawValue: "connection_failed")
        /// A TLS connection could not be set up: the peer's certificate is not trusted or does not name
        /// the host, or the peer does not speak TLS. Retrying does not help until the configuration
        /// (the CA file, the host name, `sslmode`, `pgmodels://`) or the peer changes.
        ///
        /// ```swift
        /// catch let error as PGModelError where error.code == .tlsFailed { print(error.message) }
        /// ```
        public static let tlsFailed = Code(rawValue: "tls_failed")
        /// Wrong user name or password.
        public static let authenticationFailed = Code(rawValue: "authentication_failed")
        /// Too many failed logins for this user name or from this address: wait the time the message
        /// names before trying again (the password was not checked).
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// A request that needs a login came before `hello`.
        public static let notAuthenticated = Code(rawValue: "not_authenticated")
        /// The caller may not see or change this record.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The record does not exist (or is not visible to the caller).
        public static let notFound = Code(rawValue: "not_found")
        /// A save on a container configured with `allowsSave: false`.
        public static let saveNotAllowed = Code(rawValue: "save_not_allowed")
        /// A protocol line that is not valid JSON or not an object.
        public static let malformedMessage = Code(rawValue: "malformed_message")
        /// A protocol request with an unknown `op`.
        public static let unknownOp = Code(rawValue: "unknown_op")
        /// A protocol request without a required field.
        public static let missingField = Code(rawValue: "missing_field")
        /// A protocol field with a value of the wrong type or out of range.
        public static let invalidField = Code(rawValue: "invalid_field")
        /// A protocol line longer than the server's limit.
        public static let lineTooLong = Code(rawValue: "line_too_long")
        /// A protocol version the peer does not speak.
        public static let unsupportedProtocol = Code(rawValue: "unsupported_protocol")
        /// A blocking call made on a thread that the call itself needs (an event loop).
        public static let wouldDeadlock = Code(rawValue: "would_deadlock")
        /// A store call that did not finish within its deadline (`ModelConfiguration.requestTimeout`, the
        /// URL's `requestTimeout` option, or the service's own limit). Its connection was closed; a save
        /// that timed out may or may not have committed, as with `connection_failed`.
        public static let timeout = Code(rawValue: "timeout")
        /// The service would answer with more rows or bytes than its limits: page with `limit` and `offset`
        /// (or fetch fewer properties).
        public static let resultTooLarge = Code(rawValue: "result_too_large")
        /// A delete refused by a `.deny` relationship that still reaches models; nothing was written.
        public static let deleteDenied = Code(rawValue: "delete_denied")
        /// A relationship holds fewer models than `minimumModelCount` or more than `maximumModelCount`.
        public static let relationshipCount = Code(rawValue: "relationship_count")
        /// A history token older than history deleted with `deleteHistory`: resume from a newer token
        /// (or from the start) and refetch what you need.
        public static let historyTokenExpired = Code(rawValue: "history_token_expired")
        /// A history predicate or sort PGModel cannot translate to SQL.
        public static let unsupportedHistoryQuery = Code(rawValue: "unsupported_history_query")
        /// Any other database error; ``PGModelError/sqlState`` tells which.
        public static let databaseError = Code(rawValue: "database_error")
        /// The app's schema version is older than the store's, or a migration it needs cannot run here.
        public static let schemaVersionMismatch = Code(rawValue: "schema_version_mismatch")
        /// The store's entities have the shape of no version in the migration plan.
        public static let unknownSchemaVersion = Code(rawValue: "unknown_schema_version")
        /// A migration stage failed; the store is left at its old version with all its data.
        public static let migrationFailed = Code(rawValue: "migration_failed")
        /// A bug in PGModel: please report it.
        public static let internalError = Code(rawValue: "internal_error")
        /// A save met models someone else changed or deleted since this context read them, under
        /// ``MergePolicy/error``: nothing was written, and ``PGModelError/conflicts`` lists each model and
        /// attribute. Refresh the models (`context.refresh(_:mergeChanges:)`) and save again.
        ///
        /// ```swift
        /// catch let error as PGModelError where error.code == .saveConflict { … }
        /// ```
        public static let saveConflict = Code(rawValue: "save_conflict")
    }

    /// The stable code.
    public var code: Code
    /// A sentence naming the model, key path or SQL state; never bound values.
    public var message: String
    /// The model (entity) involved, if any.
    public var model: String?
    /// The key path or attribute involved, if any.
    public var keyPath: String?
    /// PostgreSQL's SQLSTATE, when the database raised the error.
    public var sqlState: String?
    /// For ``Code/saveConflict``: each model someone else changed or deleted, with the attributes both
    /// sides changed (this context's value, the store's and the ancestor). Empty otherwise.
    public var conflicts: [SaveConflict]
    /// For an error PostgreSQL raised: the constraint it names (a unique violation's), which the engine
    /// turns into the model's attributes. Never sent to clients.
    package var constraint: String?
    /// The id the service gave the request that failed (its error answer's `requestID`), so a report can
    /// be found in the service's logs; nil for errors of the direct store and from older servers. Not
    /// part of equality: two answers with the same code and message are the same error.
    ///
    /// ```swift
    /// catch let error as PGModelError {
    ///     print("failed: \(error.code) (request \(error.requestID ?? "-"))")
    /// }
    /// ```
    public var requestID: String?

    public init(_ code: Code, _ message: String, model: String? = nil, keyPath: String? = nil, sqlState: String? = nil,
                conflicts: [SaveConflict] = []) {
        self.conflicts = conflicts
        self.code = code
        self.message = message
        self.model = model
        self.keyPath = keyPath
        self.sqlState = sqlState
    }

    public var description: String {
        var text = "PGModelError(\(code.rawValue)): \(message)"
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        if let requestID { text += " [request \(requestID)]" }
        return text
    }

    /// Equal errors have the same code, message, model, key path, SQLSTATE and conflicts; ``requestID`` is
    /// left out, since the same failure of two requests is the same error.
    ///
    /// ```swift
    /// var answer = PGModelError(.notFound, "no such Trip")
    /// answer.requestID = "5f0c2a9e41d7-12"
    /// answer == PGModelError(.notFound, "no such Trip")   // true
    /// ```
    public static func == (lhs: PGModelError, rhs: PGModelError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.model == rhs.model && lhs.keyPath == rhs.keyPath
            && lhs.sqlState == rhs.sqlState && lhs.conflicts == rhs.conflicts && lhs.constraint == rhs.constraint
    }

    /// Hashes what ``==`` compares (not ``requestID``).
    ///
    /// ```swift
    /// let seen: Set<PGModelError> = [answer]   // one entry per distinct failure
    /// ```
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(model)
        hasher.combine(keyPath)
        hasher.combine(sqlState)
        hasher.combine(conflicts)
        hasher.combine(constraint)
    }
}
