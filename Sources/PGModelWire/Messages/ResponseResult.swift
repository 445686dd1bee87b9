@_spi(PGModelInternals) import PGModelCore

/// The result fields of a successful response; which ones depends on the request's op.
///
/// ```swift
/// let response = Response(id: 4, .count(12))   // {"count":12,"id":4,"ok":true}
/// ```
@_spi(PGModelInternals) public enum ResponseResult: Hashable, Sendable {
    /// `hello`: `{"server":…,"user":…,"userID":…}`.
    case hello(HelloResult)
    /// `ping`: `{"pong":true}`.
    case pong
    /// `register`: `{"entities":[…]}`, the registered entity names in schema order.
    case registered(entities: [String])
    /// `fetch`: `{"rows":[{"entity":…,"id":…,"values":{…}}]}`.
    case rows([FetchedRow])
    /// `fetch` with `"format":"table"`: `{"table":{"rows":[[0,"<id>",v…]],"shapes":[{"entity":…,"keys":[…]}]}}`.
    case table(FetchedTable)
    /// `count`: `{"count":12}`.
    case count(Int)
    /// `ids`: `{"ids":[{"entity":…,"id":…}]}`.
    case ids([RowReference])
    /// `save`: `{"remapped":{"<inserted id>":"<existing id>"}}`, plus `deleted`, `merged`, `dropped` and
    /// `stored` (the updated rows whole, as a `table` object) when the save has any.
    case saved(SaveResult)
    /// A part of a save in parts before its last (PROTOCOL.md §4): `{"held":2}`, the parts the server holds
    /// so far. Nothing is written until the last part, whose answer is ``saved(_:)``.
    case held(Int)
    /// `bye` and `unsubscribe`: no fields besides `ok`.
    case acknowledged
    /// `history`: `{"history":{"transactions":[…]}}`.
    case history(HistoryPage)
    /// `subscribe`: `{"subscription":7}`, the id that the subscription's events carry (the request's id).
    case subscribed(RequestID)
    /// `shares`: `{"owner":"alice","shares":[{"user":"bob","permission":"readOnly","grantedBy":"alice","createdAt":…}]}`.
    case shares(RecordSharing)

    /// The op this result answers; `nil` for ``acknowledged``, which no op but `bye` returns.
    ///
    /// ```swift
    /// ResponseResult.pong.operationName   // .ping
    /// ```
    public var operationName: Request.Operation.Name? {
        switch self {
        case .hello: return .hello
        case .pong: return .ping
        case .registered: return .register
        case .rows, .table: return .fetch
        case .count: return .count
        case .ids: return .ids
        case .saved, .held: return .save
        case .acknowledged: return .bye
        case .history: return .history
        case .subscribed: return .subscribe
        case .shares: return .shares
        }
    }

    /// Whether this result is a valid answer to `operation`. Some results answer several ops, because
    /// responses are told apart by their keys alone: `deleteHistory` answers with ``count(_:)``, and
    /// `unsubscribe`, `share` and `unshare` with ``acknowledged``.
    ///
    /// ```swift
    /// ResponseResult.count(3).answers(.deleteHistory)   // true
    /// ```
    public func answers(_ operation: Request.Operation.Name) -> Bool {
        switch (self, operation) {
        case (.count, .deleteHistory), (.acknowledged, .unsubscribe), (.acknowledged, .share), (.acknowledged, .unshare), (.registered, .migrate): return true
        default: return operationName == operation
        }
    }
}
