import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContext {
    /// Calls `block` with every model matching `descriptor`, fetching `batchSize` at a time: memory
    /// holds one batch, not the table. Unless `allowEscapingMutations`, a block that leaves unsaved
    /// changes behind makes this throw after its batch (SwiftData traps); save inside the block or
    /// allow them.
    ///
    /// Batches are keyset pages: each asks for the rows strictly after the last row of the one before in
    /// the descriptor's order (its sort keys, then the id; by id when it has none), so a batch costs the
    /// same at the end of the table as at its start and a row inserted or deleted by someone else cannot
    /// shift the rows between batches: every row that exists throughout is seen exactly once; one
    /// inserted meanwhile is seen once if it sorts after the current batch, otherwise not. The
    /// descriptor's `fetchOffset` skips rows of the first batch only, `fetchLimit` caps the total. A batch
    /// is as fast as PostgreSQL can find the rows after a position: by the primary key when unsorted; a
    /// sorted enumeration of a large table wants an index that serves its order, or every batch sorts
    /// the remaining rows. Sort keys whose last row's value cannot be read back exactly (a whole Codable
    /// attribute or array, an inverse to-one relationship, a `Decimal` field inside a document) fall
    /// back to `OFFSET` paging, whose cost grows with the position and which a concurrent insert or
    /// delete can shift.
    ///
    /// ```swift
    /// try context.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]), batchSize: 500) { trip in
    ///     total += trip.nights
    /// }
    /// ```
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        let (unsaved, firstPage) = try enumerationPages(descriptor, batchSize: batchSize)
        var pages = firstPage
        let hadChanges = hasChanges
        while let request = pages.next {
            var ids: [UUID] = []
            var count = 0
            // The batch's models die with this scope unless the block keeps them.
            do {
                let (models, last) = try fetch(unsaved, request: request, pending: false)
                count = models.count
                if let last, let readers = pages.readers {
                    // Read before the block runs, so its saves cannot move the position.
                    pages.resume(after: last, values: try keysetValues(of: last, readers: readers))
                }
                for model in models {
                    ids.append(model._$backingData.id)
                    try block(model)
                }
            }
            try checkEscapingMutations(of: T.self, allowed: allowEscapingMutations, hadChanges: hadChanges)
            forgetReleased(ids)
            guard pages.advance(count: count, of: request) else { return }
        }
    }

    /// The descriptor an enumeration fetches with (without unsaved changes) and its pages.
    func enumerationPages<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> (FetchDescriptor<T>, EnumerationPages) {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of an enumeration of \(T._$entityName) must be positive", model: T._$entityName)
        }
        var unsaved = descriptor
        unsaved.includePendingChanges = false
        var (_, base, _) = try prepare(unsaved)
        let readers = keysetReaders(for: base)
        if readers != nil, var properties = base.properties {
            // The last row of each batch must carry its sort keys' values.
            for key in base.sort {
                let first = String(key.key.split(separator: ".").first ?? "")
                if !properties.contains(first) { properties.append(first) }
            }
            base.properties = properties
        }
        return (unsaved, EnumerationPages(base: base, readers: readers, batchSize: batchSize,
                                          remaining: descriptor.fetchLimit ?? Int.max))
    }

    /// Throws when an enumeration's block left unsaved changes behind and may not.
    func checkEscapingMutations<T: PersistentModel>(of _: T.Type, allowed: Bool, hadChanges: Bool) throws {
        if !allowed && !hadChanges && hasChanges {
            throw PGModelError(.invalidField, "the enumerate block changed \(T._$entityName) models without saving; save in the block or pass allowEscapingMutations: true", model: T._$entityName)
        }
    }

    /// The models matching `descriptor` as a collection that fetches `batchSize` models at a time when
    /// read: the identifiers are fetched now, the models on access, and only the current batch is kept.
    ///
    /// Why identifiers first rather than keyset pages: a random-access collection must find position
    /// `i` without reading the rows before it. One `ids` query (a single scan and sort, linear in the
    /// rows) fixes the order and the count, each batch is then a fetch by primary key (linear too), and
    /// memory holds 16 bytes of id plus the class name per row — about 32 MB for a million rows — and
    /// one batch of models. Through the service, the `ids` answer is subject to the server's row limit
    /// (`result_too_large`); prefer `enumerate` for very large sequential reads.
    ///
    /// A row deleted by someone else after the identifiers were fetched keeps its position: its element
    /// is the model with that identifier as a fault whose properties hold their empty values (as
    /// ``model(for:)`` returns for a gone row), and ``FetchResultsCollection/lastError`` says `not_found`.
    /// Where SwiftData would trap or hand out the next row's model, every position holds the model of its
    /// own identifier. A class that cannot be built without its row (a non-optional to-one relationship,
    /// or an enum without an empty value) is fetched whole instead, so none of its rows can vanish.
    ///
    /// ```swift
    /// let trips = try context.fetch(FetchDescriptor<Trip>(), batchSize: 100)
    /// for trip in trips { print(trip.name) }
    /// ```
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of a fetch of \(T._$entityName) must be positive", model: T._$entityName)
        }
        guard let fallback = standInProbe(for: T.self) else {
            let models = try fetch(descriptor)
            return FetchResultsCollection(loaded: models, identifiers: models.map(\.persistentModelID), entityName: T._$entityName)
        }
        let identifiers = try fetchIdentifiers(descriptor)
        return FetchResultsCollection(identifiers: identifiers, batchSize: batchSize, entityName: T._$entityName,
            load: { slice in try self.alignedModels(slice, as: T.self) },
            standIn: { id in self.goneRowFault(for: id) as? T ?? fallback },
            release: { models in self.forgetReleased(models.map { $0._$backingData.id }) })
    }

    /// A stand-in built for an identifier no row has, when every class of `type`'s hierarchy can stand
    /// for a gone row (see ``goneRowFault(for:)``); nil when one cannot (a non-optional to-one
    /// relationship, an enum without an empty value). Its identifier is forgotten by the registry.
    func standInProbe<T: PersistentModel>(for type: T.Type) -> T? {
        var probe: T?
        for name in container.schema.schemaDescription.entityNames(inHierarchyOf: T._$entityName) {
            let id = PersistentIdentifier(entityName: name, id: UUID())
            defer { unregister(id.uuid) }
            guard let standIn = goneRowFault(for: id) as? T else { return nil }
            probe = probe ?? standIn
        }
        return probe
    }

    /// The identifiers of the models `descriptor` matches, as a collection read a batch at a time, as in
    /// SwiftData. The identifiers are fetched in one query (16 bytes a row), so the batches cost nothing.
    ///
    /// ```swift
    /// for id in try context.fetchIdentifiers(FetchDescriptor<Trip>(), batchSize: 1_000) { print(id) }
    /// ```
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<PersistentIdentifier> {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of a fetch of \(T._$entityName) must be positive", model: T._$entityName)
        }
        let identifiers = try fetchIdentifiers(descriptor)
        return FetchResultsCollection(identifiers: identifiers, batchSize: batchSize, entityName: T._$entityName,
                                      load: { $0 }, standIn: { $0 }, release: { _ in })
    }

    /// How each sort key's value is read back from a fetched row, or nil when some key cannot be read
    /// exactly (then enumeration pages by OFFSET).
    func keysetReaders(for request: FetchRequest) -> [KeysetReader]? {
        let schema = container.schema.schemaDescription
        func hierarchy(_ name: String) -> [EntityDescription] {
            schema.entityNames(inHierarchyOf: name).compactMap { schema.entity(named: $0) }
        }
        var readers: [KeysetReader] = []
        for key in request.sort {
            let parts = key.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let first = parts.first, !parts.contains(where: \.isEmpty) else { return nil }
            if let type = key.field {
                guard hierarchy(request.entity).contains(where: { $0.attribute(named: first)?.type == .json }),
                      [.string, .url, .bool, .int16, .int32, .int64, .float, .double].contains(type) else { return nil }
                readers.append(KeysetReader(steps: [], name: first, field: (Array(parts.dropFirst()), type)))
                continue
            }
            var entity = request.entity
            var steps: [(relationship: String, destination: String)] = []
            for (index, part) in parts.enumerated() {
                let classes = hierarchy(entity)
                let isLast = index == parts.count - 1
                if let attribute = classes.lazy.compactMap({ $0.attribute(named: part) }).first {
                    guard isLast, ![.json, .stringArray, .int64Array, .doubleArray, .boolArray].contains(attribute.type) else { return nil }
                    readers.append(KeysetReader(steps: steps, name: part, field: nil))
                } else if let owner = classes.first(where: { $0.relationship(named: part) != nil }),
                          let relationship = owner.relationship(named: part), !relationship.isToMany,
                          case .foreignKey = schema.storage(of: relationship, in: owner) {
                    if isLast {
                        readers.append(KeysetReader(steps: steps, name: part, field: nil))
                    } else {
                        steps.append((part, relationship.destination))
                        entity = relationship.destination
                    }
                } else {
                    return nil
                }
            }
        }
        return readers
    }

    /// The sort keys' values of `row` as PostgreSQL compares them, or nil when one cannot be read
    /// (a related row gone, a document field of another type, a value that cannot be bound).
    func keysetValues(of row: StoreRow, readers: [KeysetReader]) throws -> [PGValue]? {
        var values: [PGValue] = []
        for reader in readers {
            var current = row.values
            for step in reader.steps {
                guard case .uuid(let id) = current[step.relationship] ?? .null else {
                    current = [:]
                    break
                }
                let request = FetchRequest(entity: step.destination, identifiers: [id])
                guard let related = try storeRows(request).first else { return nil }
                current = related.values
            }
            guard let value = reader.value(in: current) else { return nil }
            values.append(value)
        }
        return values
    }

    /// Drops registry entries of models nobody holds any more.
    func forgetReleased(_ ids: [UUID]) {
        for id in ids where registered(id) == nil { unregister(id) }
    }

    /// The models with `ids`, in that order, fetched in one query (registered ones are reused); a row
    /// that is gone has no model.
    func models<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [T] {
        try alignedModels(ids, as: T.self).compactMap { $0 }
    }

    /// The model of each of `ids`, at its position: nil where the row is gone (or is not a `T`).
    func alignedModels<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [T?] {
        // The registry is weak: hold what it has and what is fetched until the result owns them.
        var found: [UUID: any PersistentModel] = [:]
        for id in ids { if let model = registered(id.uuid) { found[id.uuid] = model } }
        let missing = ids.map(\.uuid).filter { found[$0] == nil }
        if !missing.isEmpty {
            let request = FetchRequest(entity: T._$entityName, identifiers: missing)
            let rows = try fetchRows(request)
            defer { stagedRows = [:] }
            for row in rows { found[row.id] = try materializeConcrete(row) }
        }
        return ids.map { found[$0.uuid] as? T }
    }
}

/// The result of `fetch(_:batchSize:)`: a random-access collection that loads its models a batch at a
/// time. Not Sendable: use it where its context lives.
///
/// Every position holds the model of the identifier fetched for it. A row deleted since (or a batch that
/// could not be loaded) gives a stand-in — the model of that identifier as a fault with empty values,
/// which tries the store again when read — and ``lastError`` says why.
///
/// ```swift
/// let trips = try context.fetch(FetchDescriptor<Trip>(), batchSize: 100)
/// print(trips.count, trips[250].name)   // loads the batch holding index 250
/// if let error = trips.lastError { print(error.code) }   // not_found: a row was deleted meanwhile
/// ```
public final class FetchResultsCollection<Element>: RandomAccessCollection {
    public let startIndex = 0
    public var endIndex: Int { identifiers.count }

    private let identifiers: [PersistentIdentifier]
    private let batchSize: Int
    private let entityName: String
    /// The elements of a slice of identifiers, each at its identifier's position; nil where none exists.
    private let loadBatch: ([PersistentIdentifier]) throws -> [Element?]
    /// The element standing for an identifier whose own could not be loaded.
    private let standIn: (PersistentIdentifier) -> Element
    /// Lets the context forget the previous batch's models.
    private let releaseBatch: ([Element]) -> Void
    private var batchStart = -1
    private var batch: [Element?] = []
    /// Elements that stood in for missing ones, by position: kept, so a position reads the same object twice.
    private var standIns: [Int: Element] = [:]
    /// The error of the last batch that could not be loaded whole.
    public private(set) var lastError: PGModelError?

    /// Batches of `batchSize` loaded by `load`, which gives each identifier's element at its position (nil
    /// where there is none); `standIn` gives the element for a position whose own is missing.
    init(identifiers: [PersistentIdentifier], batchSize: Int, entityName: String,
         load: @escaping ([PersistentIdentifier]) throws -> [Element?], standIn: @escaping (PersistentIdentifier) -> Element,
         release: @escaping ([Element]) -> Void) {
        self.identifiers = identifiers
        self.batchSize = Swift.max(1, batchSize)
        self.entityName = entityName
        self.loadBatch = load
        self.standIn = standIn
        self.releaseBatch = release
    }

    /// Every element loaded already: one batch, nothing left to load.
    init(loaded: [Element], identifiers: [PersistentIdentifier], entityName: String) {
        self.identifiers = identifiers
        self.batchSize = Swift.max(1, loaded.count)
        self.entityName = entityName
        self.loadBatch = { slice in slice.map { _ in nil } }
        let elements = loaded
        self.standIn = { id in elements[Swift.max(0, identifiers.firstIndex(of: id) ?? 0)] }
        self.releaseBatch = { _ in }
        batch = loaded
        batchStart = 0
    }

    /// The model at `position`, loading its batch first when needed. A position whose model could not
    /// be loaded holds a stand-in for its identifier (see ``lastError``).
    public subscript(position: Int) -> Element {
        let start = (position / batchSize) * batchSize
        if start != batchStart { load(start) }
        let index = position - start
        if batch.indices.contains(index), let element = batch[index] { return element }
        if let kept = standIns[position] { return kept }
        let element = standIn(identifiers[position])
        standIns[position] = element
        return element
    }

    /// The identifiers of the batch starting at `start`.
    func batchIdentifiers(at start: Int) -> [PersistentIdentifier] {
        guard start >= 0, start < identifiers.count else { return [] }
        return Array(identifiers[start..<Swift.min(start + batchSize, identifiers.count)])
    }

    /// Makes `elements` (one per identifier of the batch at `start`, nil where none exists) the current
    /// batch, as loading it would: an async fetch loads the first batch before handing the collection out.
    func install(_ elements: [Element?], at start: Int) {
        batchStart = start
        batch = elements
        let missing = elements.count(where: { $0 == nil })
        if missing > 0 {
            lastError = PGModelError(.notFound, "\(missing) \(entityName) models were deleted since the fetch; their positions hold stand-ins with empty values", model: entityName)
        }
    }

    private func load(_ start: Int) {
        let previous = batch.compactMap { $0 }
        batch = []
        releaseBatch(previous)
        let slice = Array(identifiers[start..<Swift.min(start + batchSize, identifiers.count)])
        batchStart = start
        do {
            install(try loadBatch(slice), at: start)
        } catch {
            batch = Array(repeating: nil, count: slice.count)
            lastError = error as? PGModelError ?? PGModelError(.internalError, "loading a batch failed: \(type(of: error))")
        }
    }
}

/// Where one sort key's value is in a fetched row: follow `steps` (to-one relationships held as foreign
/// keys, each a fetch of the related row by id), then read `name`, then, for a key into a Codable
/// attribute, the document's `field` as PostgreSQL's `#>>` and cast would.
struct KeysetReader {
    var steps: [(relationship: String, destination: String)]
    var name: String
    var field: ([String], AttributeType)?

    /// The key's value in `values` (the row reached through ``steps``) as PostgreSQL compares it, or nil
    /// when it cannot be read exactly or bound.
    func value(in values: StoredValues) -> PGValue? {
        var value = values[name] ?? .null
        if let (path, type) = field {
            guard let read = Self.field(path, as: type, in: value) else { return nil }
            value = read
        }
        guard (try? value.validateBindable(model: nil, keyPath: nil)) != nil else { return nil }
        return value
    }

    /// `(document #>> path)::type` computed from the document's text; nil when PostgreSQL's result
    /// cannot be reproduced exactly (a field of another JSON type than the cast expects).
    static func field(_ path: [String], as type: AttributeType, in document: PGValue) -> PGValue? {
        guard case .string(let text) = document else { return document.isNull ? .null : nil }
        guard var node = try? JSONDecoder().decode(JSONNode.self, from: Data(text.utf8)) else { return nil }
        for step in path {
            guard case .object(let members) = node else { return .null }
            node = members[step] ?? .null
        }
        switch (node, type) {
        case (.null, _): return .null
        case (.string(let s), .string), (.string(let s), .url): return .string(s)
        case (.bool(let b), .bool): return .bool(b)
        case (.int(let i), .int16), (.int(let i), .int32), (.int(let i), .int64): return .int(i)
        case (.int(let i), .double): return .double(Double(i))
        case (.double(let d), .double): return .double(d)
        case (.int(let i), .float): return .double(Double(Float(i)))
        case (.double(let d), .float): return .double(Double(Float(d)))
        default: return nil
        }
    }

    indirect enum JSONNode: Decodable {
        case null, bool(Bool), int(Int64), double(Double), string(String), object([String: JSONNode]), other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let v = try? c.decode(Bool.self) { self = .bool(v) }
            else if let v = try? c.decode(Int64.self) { self = .int(v) }
            else if let v = try? c.decode(Double.self) { self = .double(v) }
            else if let v = try? c.decode(String.self) { self = .string(v) }
            else if let v = try? c.decode([String: JSONNode].self) { self = .object(v) }
            else { self = .other }
        }
    }
}

/// The batches of one enumeration: keyset pages after the last row read while its sort keys can be read
/// back exactly, `OFFSET` pages otherwise (see `enumerate`).
struct EnumerationPages {
    let base: FetchRequest
    /// How the sort keys' values are read back; nil once paging fell back to `OFFSET`.
    private(set) var readers: [KeysetReader]?
    let batchSize: Int
    /// How many more rows the descriptor's `fetchLimit` allows.
    private(set) var remaining: Int
    private var cursor: FetchCursor?
    private var visited = 0

    init(base: FetchRequest, readers: [KeysetReader]?, batchSize: Int, remaining: Int) {
        self.base = base
        self.readers = readers
        self.batchSize = batchSize
        self.remaining = remaining
    }

    /// The next batch's request; nil when the limit is reached.
    var next: FetchRequest? {
        guard remaining > 0 else { return nil }
        var request = base
        request.limit = Swift.min(batchSize, remaining)
        if readers != nil {
            request.after = cursor
            request.offset = cursor == nil ? base.offset : nil
        } else {
            // OFFSET paging: the position counts every row before it.
            request.offset = (base.offset ?? 0) + visited
        }
        return request
    }

    /// The next batch starts after `row`, whose sort keys' `values` were read (nil when they could not
    /// be: paging falls back to `OFFSET`).
    mutating func resume(after row: StoreRow, values: [PGValue]?) {
        if let values {
            cursor = FetchCursor(values: values, id: row.id)
        } else {
            readers = nil
        }
    }

    /// Counts a batch of `count` rows read with `request`; false when it was the last one.
    mutating func advance(count: Int, of request: FetchRequest) -> Bool {
        guard count == request.limit else { return false }
        visited += count
        remaining -= count
        return true
    }
}
