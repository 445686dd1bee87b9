@_spi(PGModelInternals) import PGModelCore

/// One request line: the client's ``id`` and the ``operation`` with its fields.
///
/// ```swift
/// let request = Request(id: 2, operation: .fetch(FetchRequest(entity: "Trip", limit: 10)))
/// let line = try request.encodedLine()   // {"entity":"Trip","id":2,"limit":10,"op":"fetch"}\n
/// ```
@_spi(PGModelInternals) public struct Request: Hashable, Sendable {
    /// Echoed in the response so the client can match it.
    public var id: RequestID
    /// What to do.
    public var operation: Operation
    /// How long the client waits for the answer (`"timeoutMs"`, whole milliseconds): the server answers
    /// `timeout` by then and starts and commits nothing past it, so a request its client gave up on
    /// cannot change the database later. `nil`: the server's own deadline alone.
    ///
    /// ```swift
    /// let request = Request(id: 1, operation: .ping, timeout: .seconds(5))   // {"id":1,"op":"ping","timeoutMs":5000}
    /// ```
    public var timeout: Duration?
    /// For a `save` sent in parts, which part this is (`"part"`, `"parts"`); nil for a one-line save and
    /// for every other op.
    ///
    /// ```swift
    /// let last = Request(id: 9, operation: .save(rest), part: SavePart(index: 2, count: 3))
    /// ```
    public var part: SavePart?
    /// The W3C Trace Context `traceparent` of the client's span (`"traceparent"`), so the server's span of
    /// this request joins the client's trace; nil without one. The server checks only its type and length
    /// (``WireProtocol/maxTraceParentBytes``): its tracer ignores a value it cannot read.
    ///
    /// ```swift
    /// var request = Request(id: 1, operation: .ping)
    /// request.traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    /// ```
    public var traceParent: String?
    /// The W3C Trace Context `tracestate` that goes with ``traceParent`` (`"tracestate"`); nil without one.
    ///
    /// ```swift
    /// request.traceState = "vendor=opaque"
    /// ```
    public var traceState: String?
    /// The newest commit position the client's saves reported (`"readAfter"`, PostgreSQL's LSN text form,
    /// `"0/16B3748"`), on a read: with read replicas the server reads on a standby only once it has
    /// replayed at least this far (or the connection's own last commit, whichever is later), so the client
    /// reads its own writes across reconnects and service instances. Other operations ignore it.
    ///
    /// ```swift
    /// var request = Request(id: 3, operation: .fetch(FetchRequest(entity: "Trip")))
    /// request.readAfter = LogSequenceNumber("0/16B3748")
    /// ```
    public var readAfter: LogSequenceNumber?

    public init(id: RequestID, operation: Operation, timeout: Duration? = nil, part: SavePart? = nil,
                traceParent: String? = nil, traceState: String? = nil, readAfter: LogSequenceNumber? = nil) {
        self.id = id
        self.operation = operation
        self.timeout = timeout
        self.part = part
        self.traceParent = traceParent
        self.traceState = traceState
        self.readAfter = readAfter
    }

    /// The milliseconds `timeout` is sent as: rounded up, within ``WireProtocol/timeoutMillisecondsRange``.
    public var timeoutMilliseconds: Int64? {
        guard let timeout else { return nil }
        let (seconds, attoseconds) = timeout.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return WireProtocol.timeoutMillisecondsRange.upperBound }
        let rounded = milliseconds.partialValue + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return min(max(rounded, WireProtocol.timeoutMillisecondsRange.lowerBound), WireProtocol.timeoutMillisecondsRange.upperBound)
    }

    /// The operations of protocol version 1. Payload fields sit inline in the request object, next to
    /// `id` and `op`.
    ///
    /// ```swift
    /// let op: Request.Operation = .count(FetchRequest(entity: "Trip"))
    /// ```
    public enum Operation: Hashable, Sendable {
        /// `{"op":"hello","user":…,"password":…,"protocol":1}`: log in.
        case hello(HelloPayload)
        /// `{"op":"ping"}`: liveness check; allowed before `hello`.
        case ping
        /// `{"op":"register","schema":{…}}`: create or extend the tables of a schema.
        case register(SchemaDescription)
        /// `{"op":"migrate","schema":{…},"plan":{"schemas":[…],"stages":[…]}}`: move the store's tables of
        /// the plan's entities to `schema`'s version through the plan's lightweight stages, then register
        /// `schema` (admins only; a custom stage answers `schema_version_mismatch`).
        case migrate(SchemaDescription, MigrationPlanDescription)
        /// `{"op":"fetch","entity":…,"where":…,"sort":…,"limit":…,"offset":…}`: rows.
        case fetch(FetchRequest)
        /// `{"op":"fetch",…,"format":"table"}`: the same rows as ``fetch(_:)``, answered as one `table`
        /// (each class's value names once, then values by position) instead of `rows`.
        case fetchTable(FetchRequest)
        /// Same fields as `fetch`: the number of matching rows.
        case count(FetchRequest)
        /// Same fields as `fetch`: the identities of matching rows.
        case ids(FetchRequest)
        /// `{"op":"save","inserts":[…],"updates":[…],"deletes":[…],"author":…}`: one transaction.
        case save(SaveRequest)
        /// `{"op":"bye"}`: the server answers, then closes the connection.
        case bye
        /// `{"op":"history","history":{"where":…,"newestFirst":…,"limit":…,"changedEntities":…}}`: the
        /// caller's history transactions (a non-admin sees only changes of their own rows).
        case history(HistoryRequest)
        /// `{"op":"deleteHistory","history":{…}}`: deletes matching history transactions (admins only);
        /// answers `{"count":n}`.
        case deleteHistory(HistoryRequest)
        /// `{"op":"subscribe"}` or `{"op":"subscribe","entities":["Trip"]}`: push `changes` events for
        /// saves in the session's schema (of these entities only, when given); the subscription's id is
        /// this request's id.
        case subscribe(entities: [String]?)
        /// `{"op":"unsubscribe","subscription":7}`: stops the events of subscription 7.
        case unsubscribe(subscription: RequestID)
        /// `{"op":"share","entity":"Trip","rowID":…,"user":"bob","permission":"readOnly"}`: shares a record
        /// (and what it owns through `.cascade` relationships) with a user, or changes the permission.
        /// Only the record's owner or an admin may. Same as a `save` with one entry in `shares`.
        case share(ShareChange)
        /// `{"op":"unshare","entity":"Trip","rowID":…,"user":"bob"}`: revokes the user's share of the record.
        case unshare(ShareChange)
        /// `{"op":"shares","entity":"Trip","rowID":…}`: the record's shares the caller may see; answers
        /// `{"shares":[{"user":…,"permission":…,"grantedBy":…,"createdAt":…}]}`.
        case shares(RowReference)

        /// The `op` string of this operation.
        public var name: Name {
            switch self {
            case .hello: return .hello
            case .ping: return .ping
            case .register: return .register
            case .migrate: return .migrate
            case .fetch, .fetchTable: return .fetch
            case .count: return .count
            case .ids: return .ids
            case .save: return .save
            case .bye: return .bye
            case .history: return .history
            case .deleteHistory: return .deleteHistory
            case .subscribe: return .subscribe
            case .unsubscribe: return .unsubscribe
            case .share: return .share
            case .unshare: return .unshare
            case .shares: return .shares
            }
        }

        /// The `op` strings.
        ///
        /// ```swift
        /// Request.Operation.Name(rawValue: "fetch")   // .fetch
        /// ```
        public enum Name: String, Hashable, Sendable, CaseIterable, Codable {
            case hello, ping, register, fetch, count, ids, save, bye, history, deleteHistory, subscribe, unsubscribe, share, unshare, shares, migrate
        }
    }
}
