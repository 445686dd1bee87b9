@_spi(PGModelInternals) import PGModelCore

/// Renders Query IR and saves into parameterized PostgreSQL, and schema descriptions into DDL.
///
/// Identifiers come only from the registered schema and are always quoted; every value is a bind.
/// Both the direct store and the service use this one renderer.
///
/// ```swift
/// let renderer = try SQLRenderer(schema: schema, schemaName: "public")
/// let select = try renderer.select(FetchRequest(entity: "Trip", sort: [SortKey("startDate")]))
/// // SELECT "id", "entity", "name", … FROM "public"."trip" ORDER BY "start_date" ASC NULLS FIRST, "id" ASC
/// ```
@_spi(PGModelInternals) public struct SQLRenderer: Sendable {
    /// The registered schema.
    public let schema: SchemaDescription
    /// The PostgreSQL schema (namespace) holding the model tables.
    public let schemaName: String

    /// The largest captured array `contains` renders; beyond it PostgreSQL's bind limit is near.
    public static let maximumInListCount = RequestLimits.maximumListCount

    /// Throws `invalidConfiguration` if `schemaName` is not a plain identifier.
    public init(schema: SchemaDescription, schemaName: String = "public") throws {
        guard Naming.isValidIdentifier(schemaName) else {
            throw PGModelError(.invalidConfiguration, "PostgreSQL schema name '\(schemaName)' is not a plain identifier")
        }
        self.schema = schema
        self.schemaName = schemaName
    }

    /// `"schema"."table"` of `entity`: the table of its class hierarchy (its root's table), since every
    /// class of a hierarchy lives in one table.
    public func qualifiedTable(_ entity: EntityDescription) -> String {
        qualifiedTable(named: schema.tableName(of: entity.name) ?? entity.tableName)
    }

    /// `"schema"."name"`.
    public func qualifiedTable(named name: String) -> String {
        Naming.quoted(schemaName) + "." + Naming.quoted(name)
    }

    /// The entity named `name`, or `unknownEntity`.
    public func entity(_ name: String) throws -> EntityDescription {
        guard let entity = schema.entity(named: name) else {
            throw PGModelError(.unknownEntity, "entity '\(name)' is not registered in the schema", model: name)
        }
        return entity
    }

    /// The attribute `name` of `entity`, or `unknownAttribute`.
    func attribute(_ name: String, of entity: EntityDescription) throws -> AttributeDescription {
        guard let attribute = entity.attribute(named: name) else {
            throw PGModelError(.unknownAttribute, "\(entity.name) has no stored property '\(name)'", model: entity.name, keyPath: name)
        }
        return attribute
    }
}
