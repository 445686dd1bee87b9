import Foundation
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

@_spi(PGModelInternals) extension PostgresStoreEngine {
    /// Rows of `request` visible to `requester`, in the request's order.
    ///
    /// `templates`, when given, must belong to `schema` (see ``SelectTemplateCache``).
    public func fetch(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: EngineConnection,
                      templates: SelectTemplateCache? = nil) async throws -> [RowValues] {
        try await fetchTable(request, in: schema, as: requester, on: connection, templates: templates).rowValues
    }

    /// Rows of `request` visible to `requester`, in the request's order, positionally: each cell is
    /// decoded straight into its row's value array, and each class's value names are listed once.
    ///
    /// `templates`, when given, must belong to `schema`: a request of a shape rendered before is then
    /// filled into that shape's SQL instead of rendered again (``SelectTemplateCache``).
    public func fetchTable(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: EngineConnection,
                           templates: SelectTemplateCache? = nil) async throws -> FetchedTable {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let entity = try renderer.entity(request.entity)
        let (statement, layout) = try templates?.select(request, renderer: renderer) ?? SelectTemplateCache.render(request, renderer)
        let isSmall = Self.expectsFewRows(request, entity: entity)
        let rows = try await scoped(requester, on: connection) {
            try await isSmall ? select(statement, on: connection, model: entity.name) : query(statement, on: connection, model: entity.name)
        }
        return try await Self.table(of: rows, layout: layout, entity: entity.name, decodingOn: connection.budget.largeResultExecutor)
    }

    /// Appends `row` to `rows` after adding its cells' bytes to `bytes`; throws `result_too_large` when
    /// they pass `budget`.
    static func append(_ row: PostgresRow, to rows: inout [PostgresRow], bytes: inout Int, budget: Int, model: String?) throws {
        for cell in row { bytes += cell.bytes?.readableBytes ?? 0 }
        guard bytes <= budget else {
            throw PGModelError(.resultTooLarge,
                               "the rows read\(model.map { " of \($0)" } ?? "") pass the server's limit of \(budget) bytes for one answer; ask for fewer (page with 'limit')",
                               model: model)
        }
        rows.append(row)
    }

    /// The fewest rows whose decoding is split between this thread and another event loop.
    static let parallelDecodeRows = 8_192

    /// The fewest rows decoded on the request's ``RequestBudget/largeResultExecutor`` when it has one.
    package static let largeResultRows = 257

    /// ``table(of:layout:entity:)``, on `executor` when the result has ``largeResultRows`` or more; a
    /// large result is decoded in two halves at once, the second on another of the default group's event
    /// loops, when one is not this thread: decoding a large result takes longer than reading it, and all
    /// on the connection's loop would leave the other cores idle.
    static func table(of rows: [PostgresRow], layout: SelectLayout, entity: String,
                      decodingOn executor: (any TaskExecutor)? = nil) async throws -> FetchedTable {
        if rows.count >= largeResultRows, let executor {
            return try await withTaskExecutorPreference(executor) { try await table(of: rows, layout: layout, entity: entity) }
        }
        guard rows.count >= parallelDecodeRows, let helper = helperLoop() else {
            return try table(of: rows[...], layout: layout, entity: entity)
        }
        let middle = rows.count / 2
        // Both halves read the one array (shared, not copied); the first half's table grows in place.
        let second = Task(executorPreference: EventLoopTaskExecutor(eventLoop: helper)) {
            try table(of: rows[middle...], layout: layout, entity: entity)
        }
        var whole: FetchedTable
        do {
            whole = try table(of: rows[..<middle], layout: layout, entity: entity)
        } catch {
            _ = try? await second.value
            throw error
        }
        whole.append(contentsOf: try await second.value)
        return whole
    }

    /// The most rows (by `limit`, or by identifiers asked for) a fetch may ask for to run as a named
    /// prepared statement.
    static let preparedSelectRowLimit = 1_000

    /// Whether `request` runs as a named prepared statement: when it can only return a few rows.
    ///
    /// A named statement saves PostgreSQL's parse and plan, which is most of a few rows' cost. A large
    /// result is read faster whole on the event loop, as the unnamed path does, than row by row. A few rows means a `limit` or an identifier list of at most
    /// ``preparedSelectRowLimit`` (a fetch by persistent identifiers is one), or a predicate whose
    /// conjuncts pin every attribute of one of the class's uniqueness constraints to a value — SwiftData's usual point fetch,
    /// `#Predicate { $0.email == email }`, has no `fetchLimit`. Uniqueness is per owner unless declared
    /// across all users, so a service user may still get one row per owner who shared one, and an admin one
    /// per owner: few, or at worst a large result read a little slower. Never a different result.
    ///
    /// ```swift
    /// // entity: uniquenessConstraints [["email"]]
    /// PostgresStoreEngine.expectsFewRows(FetchRequest(entity: "User",
    ///     predicate: .compare(.equal, .key("email"), .value(.string("a@b.c")))), entity: entity)   // true
    /// ```
    static func expectsFewRows(_ request: FetchRequest, entity: EntityDescription) -> Bool {
        if (request.limit ?? Int.max) <= preparedSelectRowLimit || (request.identifiers?.count ?? Int.max) <= preparedSelectRowLimit {
            return true
        }
        guard let predicate = request.predicate else { return false }
        var pinned = Set<String>()
        collectPinnedKeys(predicate, into: &pinned)
        return entity.uniquenessConstraints.contains { group in !group.attributes.isEmpty && group.attributes.allSatisfy(pinned.contains) }
    }

    /// The keys a row matching `expression` must have equal to a non-null value: the `key = value`
    /// comparisons among its top-level conjuncts.
    private static func collectPinnedKeys(_ expression: QueryExpression, into keys: inout Set<String>) {
        switch expression {
        case .and(let terms):
            for term in terms { collectPinnedKeys(term, into: &keys) }
        case .compare(.equal, .key(let key), .value(let value)), .compare(.equal, .value(let value), .key(let key)):
            // `= NULL` is rendered `IS NULL`, and a uniqueness constraint lets many rows be NULL.
            if value != .null { keys.insert(key) }
        default:
            break
        }
    }

    /// An event loop of the default group other than the current thread's, taken in turn (`next()`), so
    /// a server's concurrent large fetches spread their second halves over the loops; nil when the group
    /// has only this thread's loop.
    private static func helperLoop() -> (any EventLoop)? {
        let group = PostgresConnection.defaultEventLoopGroup
        for _ in 0..<2 {
            let loop = group.next()
            if !loop.inEventLoop { return loop }
        }
        return group.makeIterator().first { !$0.inEventLoop }
    }

    /// `rows` of a select with `layout` as a table: each cell decoded straight into its row's value array.
    private static func table(of rows: ArraySlice<PostgresRow>, layout: SelectLayout, entity: String) throws -> FetchedTable {
        var table = FetchedTable()
        table.rows.reserveCapacity(rows.count)
        // Shapes by the `entity` text as stored; rows of one class usually come in runs, so the last
        // one is tried before the dictionary.
        var shapeOfStored: [String: RowShape] = [:]
        var last: (stored: String, shape: RowShape)?
        let columnCount = 2 + layout.attributes.count + layout.foreignKeys.count + (layout.viaIndex == nil ? 0 : 1)
        for row in rows {
            // The cells in order, as the driver's own tuple decoding reads them: a random-access row
            // would copy every cell's buffer into an array first.
            var cells = row.makeIterator()
            do {
                guard let idCell = cells.next(), let entityCell = cells.next() else { throw PostgresDecodingError.Code.missingData }
                let id = try PostgresValueCoding.uuid(of: idCell)
                let stored = try PostgresValueCoding.string(of: entityCell)
                let shape: RowShape
                if let last, last.stored == stored {
                    shape = last.shape
                } else if let known = shapeOfStored[stored] {
                    shape = known
                } else {
                    // Rows are decoded as their concrete class; a class no longer registered reads as the fetched one.
                    let concrete = layout.fieldsByEntity[stored] == nil ? entity : stored
                    let fields = layout.fields(of: concrete)
                    shape = RowShape(index: table.shapes.count, fields: fields, columnCount: columnCount)
                    table.shapes.append(FetchedTable.Shape(entity: concrete, keys: fields.map(\.name)))
                    shapeOfStored[stored] = shape
                }
                last = (stored, shape)
                var values = [PGValue](repeating: .null, count: shape.types.count)
                var via: UUID?
                var column = 2
                while let cell = cells.next() {
                    defer { column += 1 }
                    if column == layout.viaIndex {
                        via = try PostgresValueCoding.uuid(of: cell)
                    } else if column < shape.slots.count, case let slot = shape.slots[column], slot >= 0 {
                        values[slot] = try PostgresValueCoding.decodeInPlace(cell, as: shape.types[slot])
                    }
                }
                guard column == columnCount else { throw PostgresDecodingError.Code.missingData }
                table.rows.append(FetchedTable.Row(shape: shape.index, id: id, values: values, via: via))
            } catch let error as PGModelError {
                throw error
            } catch {
                throw PGModelError(.typeMismatch, "a row of \(entity) does not match the registered column types", model: entity)
            }
        }
        return table
    }

    /// Where each cell of a row of one class goes: ``slots`` maps a cell's index to the position of
    /// its value in the row's values (-1 for a column of another class), ``types`` each value's type.
    struct RowShape {
        var index: Int
        var slots: [Int]
        var types: [AttributeType]

        init(index: Int, fields: [SelectLayout.Field], columnCount: Int) {
            self.index = index
            var slots = [Int](repeating: -1, count: columnCount)
            for (position, field) in fields.enumerated() where field.index >= 0 && field.index < columnCount {
                slots[field.index] = position
            }
            self.slots = slots
            self.types = fields.map(\.type)
        }
    }

    /// The number of rows of `request` visible to `requester`.
    public func count(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: EngineConnection) async throws -> Int {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let statement = try renderer.count(request)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: request.entity) }
        guard let row = rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    /// The ids of rows of `request` visible to `requester`, in its order.
    public func fetchIdentifiers(_ request: FetchRequest, in schema: SchemaDescription, as requester: Requester, on connection: EngineConnection) async throws -> [RowReference] {
        let renderer = try SQLRenderer(schema: schema, schemaName: schemaName)
        let statement = try renderer.selectIdentifiers(request)
        let rows = try await scoped(requester, on: connection) { try await query(statement, on: connection, model: request.entity) }
        if rows.count >= Self.largeResultRows, let executor = connection.budget.largeResultExecutor {
            return try await withTaskExecutorPreference(executor) { try Self.references(of: rows) }
        }
        return try Self.references(of: rows)
    }

    private static func references(of rows: [PostgresRow]) throws -> [RowReference] {
        try rows.map { row in
            // The id and entity cells first (a related fetch adds `via` after them), read in place.
            var cells = row.makeIterator()
            guard let idCell = cells.next(), let entityCell = cells.next() else {
                throw PGModelError(.internalError, "an identifier row lacks its id or entity column")
            }
            return RowReference(entity: try PostgresValueCoding.string(of: entityCell), id: try PostgresValueCoding.uuid(of: idCell))
        }
    }
}

/// The select templates (``SelectTemplate``) of one schema, by request shape: a fetch of a shape rendered
/// before costs a dictionary lookup and copying its parameters into place, not a render and a validation.
///
/// Entries are valid for the one ``SchemaDescription`` the cache was made for: whoever holds the schema
/// holds its cache and replaces both together. Bounded: past ``capacity`` shapes it starts over.
///
/// ```swift
/// let (statement, layout) = try templates.select(request, renderer: renderer)
/// ```
@_spi(PGModelInternals) public final class SelectTemplateCache: Sendable {
    private enum Entry: Sendable {
        case template(SelectTemplate)
        /// Rendered per request: its SQL or binds depend on more than the shape.
        case renders
    }

    /// The most shapes kept; an app has as many as it has distinct fetch call sites, not values.
    public static let capacity = 512

    private let entries = NIOLockedValueBox([FetchRequest: Entry]())

    public init() {}

    /// `request`'s select statement and layout: filled into its shape's template when there is one,
    /// rendered otherwise (and, the first time a shape is seen, its template worked out and checked against
    /// that render).
    public func select(_ request: FetchRequest, renderer: SQLRenderer) throws -> (SQLStatement, SelectLayout) {
        guard let (shape, parameters) = request.selectParameters() else { return try Self.render(request, renderer) }
        switch entries.withLockedValue({ $0[shape] }) {
        case .template(let template)?:
            // What the render would check of the values themselves; anything else it checked for the shape.
            // An invalid value is rendered, so its error is the renderer's own.
            guard Self.acceptable(request, parameters), let statement = template.statement(parameters) else {
                return try Self.render(request, renderer)
            }
            return (statement, template.layout)
        case .renders?:
            return try Self.render(request, renderer)
        case nil:
            let rendered = try Self.render(request, renderer)
            var entry = Entry.renders
            // The template must reproduce this very render, or it is not used.
            if let template = try? renderer.selectTemplate(shape), template.layout == rendered.1,
               template.statement(parameters) == rendered.0 {
                entry = .template(template)
            }
            entries.withLockedValue { entries in
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
                entries[shape] = entry
            }
            return rendered
        }
    }

    /// The statement and layout of `request`, rendered.
    static func render(_ request: FetchRequest, _ renderer: SQLRenderer) throws -> (SQLStatement, SelectLayout) {
        let layout = try renderer.selectLayout(request)
        return (try renderer.select(request, layout: layout), layout)
    }

    /// The checks of `FetchRequest.validate(against:)` that depend on values rather than the shape.
    private static func acceptable(_ request: FetchRequest, _ parameters: [PGValue]) -> Bool {
        if let limit = request.limit, limit < 0 { return false }
        if let offset = request.offset, offset < 0 { return false }
        for parameter in parameters {
            guard (try? parameter.validateBindable(model: nil, keyPath: nil)) != nil else { return false }
        }
        return true
    }
}
