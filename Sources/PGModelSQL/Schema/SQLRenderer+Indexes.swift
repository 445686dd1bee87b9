@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// The PostgreSQL name of an `#Index` group on `columns` of `tableName`. A binary index keeps the
    /// name it always had (`trip_start_date_idx`); an rtree index ends in `_gist`
    /// (`trip_latitude_longitude_gist`), so changing an index's kind changes its name and a migration
    /// drops the old index and creates the new one (`CREATE INDEX IF NOT EXISTS` would keep an index of
    /// the same name whatever its method).
    ///
    /// ```swift
    /// renderer.indexName("trip", ["latitude", "longitude"], kind: .rtree)   // "trip_latitude_longitude_gist"
    /// ```
    public func indexName(_ tableName: String, _ columns: [String], kind: IndexDescription.Kind) -> String {
        switch kind {
        case .binary: return objectName(tableName, columns, suffix: "idx")
        case .rtree: return objectName(tableName, columns, suffix: "gist")
        }
    }

    /// The columns and PostgreSQL name of `index`, declared on `entity` of the table `tableName`.
    func indexColumns(_ index: IndexDescription, of entity: EntityDescription, tableName: String) -> (name: String, columns: [String]) {
        let columns = index.attributes.compactMap { constraintColumn($0, of: entity) }
        return (indexName(tableName, columns, kind: index.kind), columns)
    }

    /// `CREATE INDEX IF NOT EXISTS` for every `#Index` of the classes sharing `root`'s table, each group
    /// once: a B-tree for `.binary`, GiST for `.rtree`.
    func indexStatements(_ root: EntityDescription, classes: [EntityDescription]) -> [String] {
        let table = qualifiedTable(named: root.tableName)
        var seen: [IndexDescription] = []
        var statements: [String] = []
        for c in classes {
            for index in c.indexes where !seen.contains(index) {
                seen.append(index)
                let (name, columns) = indexColumns(index, of: c, tableName: root.tableName)
                let list = columns.map(Naming.quoted).joined(separator: ", ")
                switch index.kind {
                case .binary:
                    statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(name)) ON \(table) (\(list))")
                case .rtree:
                    statements.append("CREATE INDEX IF NOT EXISTS \(Naming.quoted(name)) ON \(table) USING gist (\(list))")
                }
            }
        }
        return statements
    }

    /// Whether any of `entities` has an rtree index, which needs ``btreeGistStatement``.
    func needsBTreeGist(_ entities: [EntityDescription]) -> Bool {
        entities.contains { entity in entity.indexes.contains { $0.kind == .rtree } }
    }

    /// Creates `btree_gist` unless the database has it: GiST has no operator classes for plain numbers and
    /// timestamps without it. It is a "trusted" contrib extension, so the database owner (the role PGModel
    /// normally logs in as) may create it; it is created only when a schema first asks for an rtree index,
    /// so stores without one never need it. It goes where the system SQL's `pgcrypto` is, never into a
    /// store's own schema by way of the search path: dropping that schema (the end of an in-memory
    /// container) would take the extension, and every GiST index of the database, with it. A role that
    /// may not create it, or a server without contrib (PostgreSQL 15 says `feature_not_supported`, older
    /// ones `undefined_file`), gets an error saying what an administrator does.
    static let btreeGistStatement = """
        DO $pgmodel$ DECLARE ext_schema text; BEGIN \
        IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gist') THEN \
        SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pgcrypto'; \
        IF ext_schema IS NULL THEN CREATE EXTENSION btree_gist; \
        ELSE EXECUTE format('CREATE EXTENSION btree_gist SCHEMA %I', ext_schema); END IF; \
        END IF; \
        EXCEPTION \
        WHEN insufficient_privilege THEN \
        RAISE EXCEPTION 'an rtree index (#Index .rtree) needs the PostgreSQL extension btree_gist, which this role may not create' \
        USING ERRCODE = 'insufficient_privilege', HINT = 'run CREATE EXTENSION btree_gist; in this database as its owner or a superuser'; \
        WHEN undefined_file OR undefined_object OR feature_not_supported THEN \
        RAISE EXCEPTION 'an rtree index (#Index .rtree) needs the PostgreSQL extension btree_gist, which this server does not have: install the PostgreSQL contrib package (postgresql-contrib)' \
        USING ERRCODE = 'undefined_object'; \
        END $pgmodel$
        """
}
