import Foundation

/// A fetch's rows in positional form: each class's value names once (a ``Shape``), then per row only
/// its values, in the shape's order. This is what the stores produce and what `ModelContext` builds
/// models from: no per-row dictionary, and on the wire no per-row key names (`"format":"table"`).
///
/// ```swift
/// let table = FetchedTable(shapes: [.init(entity: "Trip", keys: ["name", "perdiem"])],
///                          rows: [.init(shape: 0, id: UUID.v7(), values: [.string("Paris"), .double(120.5)])])
/// table.rowValues[0].values["name"]   // .string("Paris")
/// ```
@_spi(PGModelInternals) public struct FetchedTable: Hashable, Sendable {
    /// The value names of the rows of one concrete class, in the order of ``Row/values``.
    public struct Shape: Hashable, Sendable {
        /// The concrete class (a subclass name for subclass rows).
        public var entity: String
        /// Swift property names: attributes, then to-one relationships stored as a foreign key.
        public var keys: [String]

        public init(entity: String, keys: [String]) {
            self.entity = entity
            self.keys = keys
        }
    }

    /// One row: which shape, its id, its values by position (`keys.count` of them), and for a related
    /// fetch the source row it was reached from.
    public struct Row: Hashable, Sendable {
        /// An index into ``FetchedTable/shapes``.
        public var shape: Int
        public var id: UUID
        public var values: [PGValue]
        /// For rows fetched with ``FetchRequest/related``: the source row this one was reached from.
        public var via: UUID?

        public init(shape: Int, id: UUID, values: [PGValue], via: UUID? = nil) {
            self.shape = shape
            self.id = id
            self.values = values
            self.via = via
        }
    }

    public var shapes: [Shape]
    public var rows: [Row]

    public init(shapes: [Shape] = [], rows: [Row] = []) {
        self.shapes = shapes
        self.rows = rows
    }

    /// Rows given by name (an older service's `rows` answer, or a store that only has ``RowValues``),
    /// grouped into one shape per distinct class and key set.
    public init(rows named: [RowValues]) {
        var shapes: [Shape] = []
        var index: [Shape: Int] = [:]
        var rows: [Row] = []
        rows.reserveCapacity(named.count)
        for row in named {
            let shape = Shape(entity: row.entity, keys: row.values.keys.sorted())
            let position: Int
            if let known = index[shape] {
                position = known
            } else {
                position = shapes.count
                index[shape] = position
                shapes.append(shape)
            }
            rows.append(Row(shape: position, id: row.id, values: shape.keys.map { row.values[$0] ?? .null }, via: row.via))
        }
        self.init(shapes: shapes, rows: rows)
    }

    /// Whether every row names an existing shape and has exactly as many values as its shape has keys:
    /// what a decoder checks before anyone indexes by position.
    public var isConsistent: Bool {
        rows.allSatisfy { $0.shape >= 0 && $0.shape < shapes.count && $0.values.count == shapes[$0.shape].keys.count }
    }

    /// The rows by name, as ``ModelStore/fetch`` returns them. Rows of an inconsistent table (see
    /// ``isConsistent``) are left out.
    public var rowValues: [RowValues] {
        rows.compactMap { row in
            guard row.shape >= 0, row.shape < shapes.count, row.values.count == shapes[row.shape].keys.count else { return nil }
            let shape = shapes[row.shape]
            var values: [String: PGValue] = [:]
            values.reserveCapacity(shape.keys.count)
            for (key, value) in zip(shape.keys, row.values) { values[key] = value }
            return RowValues(entity: shape.entity, id: row.id, values: values, via: row.via)
        }
    }
}
