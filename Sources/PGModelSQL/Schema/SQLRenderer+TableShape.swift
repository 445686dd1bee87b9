@_spi(PGModelInternals) import PGModelCore

/// A column the models need in one of their tables: what a registration compares with the tables that
/// already exist before it runs any DDL.
///
/// ```swift
/// renderer.requiredColumns(ofTablesOf: ["Trip"]).map(\.column)   // ["id", "entity", "owner_id", "name", …]
/// ```
@_spi(PGModelInternals) public struct ModelColumn: Sendable, Hashable {
    /// The table's name, without its schema.
    public var table: String
    /// The column's name.
    public var column: String
    /// The PostgreSQL type the DDL writes (`text`, `timestamptz`, `bigint[]`).
    public var type: String
    /// Whether every row of the table has a value (the DDL makes it `NOT NULL`).
    public var isRequired: Bool
    /// What stores it, for messages: `Trip.startDate`, or `PGModel` for the system columns.
    public var storedBy: String

    public init(table: String, column: String, type: String, isRequired: Bool, storedBy: String) {
        self.table = table
        self.column = column
        self.type = type
        self.isRequired = isRequired
        self.storedBy = storedBy
    }
}

/// A column of an existing table as PostgreSQL's catalog (`pg_attribute`) holds it.
///
/// ```swift
/// CatalogColumn(table: "trip", column: "end_date", type: "timestamp with time zone", isNotNull: true, hasDefault: false)
/// ```
@_spi(PGModelInternals) public struct CatalogColumn: Sendable, Hashable {
    /// The table's name, without its schema.
    public var table: String
    /// The column's name.
    public var column: String
    /// The type as `regtype` prints it (`timestamp with time zone`).
    public var type: String
    /// `NOT NULL`.
    public var isNotNull: Bool
    /// The column has a default, so an insert that does not name it still succeeds.
    public var hasDefault: Bool

    public init(table: String, column: String, type: String, isNotNull: Bool, hasDefault: Bool) {
        self.table = table
        self.column = column
        self.type = type
        self.isNotNull = isNotNull
        self.hasDefault = hasDefault
    }
}

@_spi(PGModelInternals) extension SQLRenderer {
    /// Every column the tables of `entities` need (their hierarchies' tables and join tables), as
    /// ``createStatements()`` writes them.
    ///
    /// ```swift
    /// let needed = renderer.requiredColumns(ofTablesOf: ["Trip"])
    /// ```
    public func requiredColumns(ofTablesOf entities: Set<String>) -> [ModelColumn] {
        let rootNames = Set(entities.compactMap { schema.rootEntity(of: $0)?.name })
        var columns: [ModelColumn] = []
        for root in schema.entities where root.superentity == nil && rootNames.contains(root.name) {
            let table = root.tableName
            columns.append(ModelColumn(table: table, column: "id", type: "uuid", isRequired: true, storedBy: "PGModel"))
            columns.append(ModelColumn(table: table, column: "entity", type: "text", isRequired: true, storedBy: "PGModel"))
            columns.append(ModelColumn(table: table, column: "owner_id", type: "uuid", isRequired: false, storedBy: "PGModel"))
            let (hierarchy, classes, attributes) = tableContents(ofRoot: root)
            for (attribute, declaredBy) in attributes {
                let required = self.classes(requiring: attribute.columnName, among: classes).count == classes.count
                columns.append(ModelColumn(table: table, column: attribute.columnName, type: attribute.type.postgresType,
                                           isRequired: required, storedBy: "\(declaredBy).\(attribute.name)"))
            }
            let foreignKeys = hierarchy.isEmpty ? [] : schema.tableForeignKeys(ofRoot: root.name)
            for (relationship, declaredBy) in foreignKeys {
                columns.append(ModelColumn(table: table, column: relationship.foreignKeyColumn, type: "uuid",
                                           isRequired: false, storedBy: "\(declaredBy).\(relationship.name)"))
            }
        }
        let rootTables = Set(schema.entities.filter { rootNames.contains($0.name) }.map(\.tableName))
        for join in joinTables() where rootTables.contains(join.sourceTable) || rootTables.contains(join.destinationTable) {
            let storedBy = "the join table \(join.table)"
            columns.append(ModelColumn(table: join.table, column: join.sourceColumn, type: "uuid", isRequired: true, storedBy: storedBy))
            columns.append(ModelColumn(table: join.table, column: join.destinationColumn, type: "uuid", isRequired: true, storedBy: storedBy))
        }
        return columns
    }

    /// How the existing tables differ from what the models need, in words that name tables, columns and
    /// properties (never a value), by table; empty when the models can use every table as it is.
    ///
    /// A table the catalog does not list is new and fits. An existing one does not fit when a column the
    /// models store has another type, when a column they treat as optional is `NOT NULL`, when a `NOT NULL`
    /// column without a default is one no model stores (every insert would fail), or when a required
    /// column is missing and the table has rows (adding it would fail).
    ///
    /// ```swift
    /// SQLRenderer.shapeDifferences(needed: needed, existing: catalog, canonicalType: { types[$0] ?? $0 }, tablesWithRows: [])
    /// // ["trip": ["end_date is NOT NULL, has no default, and no property stores it"]]
    /// ```
    public static func shapeDifferences(needed: [ModelColumn], existing: [CatalogColumn],
                                        canonicalType: (String) -> String,
                                        tablesWithRows: Set<String>) -> [(table: String, differences: [String])] {
        var existingByTable: [String: [CatalogColumn]] = [:]
        for column in existing { existingByTable[column.table, default: []].append(column) }
        var neededByTable: [(table: String, columns: [ModelColumn])] = []
        for column in needed {
            if let i = neededByTable.firstIndex(where: { $0.table == column.table }) {
                if !neededByTable[i].columns.contains(where: { $0.column == column.column }) { neededByTable[i].columns.append(column) }
            } else {
                neededByTable.append((column.table, [column]))
            }
        }
        var result: [(table: String, differences: [String])] = []
        for (table, columns) in neededByTable {
            guard let catalog = existingByTable[table] else { continue }
            var differences: [String] = []
            for column in columns {
                let quoted = Naming.quoted(column.column)
                guard let have = catalog.first(where: { $0.column == column.column }) else {
                    if column.isRequired && tablesWithRows.contains(table) {
                        differences.append("\(quoted) is missing, and \(column.storedBy) needs it in every row, but the table has rows")
                    }
                    continue
                }
                let wanted = canonicalType(column.type)
                if have.type != wanted {
                    differences.append("\(quoted) is \(have.type), but \(column.storedBy) needs \(wanted)")
                } else if have.isNotNull && !column.isRequired {
                    differences.append("\(quoted) is NOT NULL, but \(column.storedBy) may be nil")
                }
            }
            let stored = Set(columns.map(\.column))
            for have in catalog where !stored.contains(have.column) && have.isNotNull && !have.hasDefault {
                differences.append("\(Naming.quoted(have.column)) is NOT NULL, has no default, and no property stores it")
            }
            if !differences.isEmpty { result.append((table, differences)) }
        }
        return result
    }
}
