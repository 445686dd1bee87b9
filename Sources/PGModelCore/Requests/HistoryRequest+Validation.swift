@_spi(PGModelInternals) extension HistoryRequest {
    /// Checks the request before any SQL is rendered: a non-negative limit, bounded lists and nesting,
    /// at most ``RequestLimits/maximumListCount`` conditions in all (each becomes a bind), and values
    /// PostgreSQL can take. Throws `invalid_field` naming the field.
    ///
    /// ```swift
    /// try HistoryRequest(filter: .token(.greater, 41), limit: 100).validate()
    /// ```
    public func validate() throws {
        if let limit, limit < 0 {
            throw PGModelError(.invalidField, "the limit of a history request must not be negative", keyPath: "limit")
        }
        try FetchRequest.checkCount(changedEntities?.count, "changedEntities", "history")
        try FetchRequest.checkCount(sort.count, "sort", "history")
        var conditions = 0
        try filter.validate(depth: 1, conditions: &conditions)
    }
}

extension HistoryFilter {
    func validate(depth: Int, conditions: inout Int) throws {
        guard depth <= RequestLimits.maximumExpressionDepth else {
            throw PGModelError(.invalidField, "a history filter may nest at most \(RequestLimits.maximumExpressionDepth) levels deep", keyPath: "where")
        }
        conditions += 1
        guard conditions <= RequestLimits.maximumListCount else {
            throw PGModelError(.invalidField, "a history filter has more than \(RequestLimits.maximumListCount) conditions", keyPath: "where")
        }
        switch self {
        case .all, .none, .token, .transactionIdentifier, .author(_, nil):
            return
        case .author(_, let name?):
            try PGValue.string(name).validateBindable(model: nil, keyPath: "author")
        case .authorIn(let names), .entities(let names):
            try FetchRequest.checkCount(names.count, "where", "history")
        case .timestamp(_, let date):
            try PGValue.date(date).validateBindable(model: nil, keyPath: "timestamp")
        case .and(let parts), .or(let parts):
            try FetchRequest.checkCount(parts.count, "where", "history")
            for part in parts { try part.validate(depth: depth + 1, conditions: &conditions) }
        case .not(let inner):
            try inner.validate(depth: depth + 1, conditions: &conditions)
        }
    }
}
