@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// The role every service request runs as (its connection's `role`): no BYPASSRLS, so the policies
    /// below decide every row it reads or writes.
    public static let applicationRole = "pgmodel_app"

    /// The role an admin's service transactions run as instead (a member of ``applicationRole``, no
    /// BYPASSRLS): its own policies show it every row while the requesting user is an admin. A plain
    /// user's policies then need no "or an admin" arm, which would keep PostgreSQL from using an index.
    public static let adminRole = "pgmodel_admin"

    /// Row-level security of the schema's tables, after ``createStatements()`` made them:
    ///
    /// * `pgmodel_cascade_links`, a view of every `.cascade` edge (parent id, child id, child owner, and
    ///   both sides' root classes), `pgmodel_shared_ids(root, write, childrenOnly)`, the ids of the rows of
    ///   one hierarchy shared with the requesting user: the roots in `pgmodel.shares` (matched by root
    ///   class and id, and only while the row has the share's owner) and what they own through cascades,
    ///   transitively; `pgmodel_shared_keys()`, the same rows as `id class` keys, for history; and
    ///   `pgmodel_shared_keys_for(user)`, those of any user, for the service's history fan-out (the owner's only).
    /// * On every model and join table: `ENABLE` and `FORCE ROW LEVEL SECURITY`, a policy for the table
    ///   owner (the database owner's direct connections see every row), policies for
    ///   ``applicationRole``: owner or share; writes need a read-write share; deletes of a shared
    ///   root need its owner; and one for ``adminRole``: every row, while the user is an admin.
    /// * Privileges of ``applicationRole``: rows, and updates of model columns only (never `id`, `entity`
    ///   or `owner_id`).
    /// * A row trigger that judges a service user's references as of before the statement (a reference
    ///   to a row they cannot see must point at a row their transaction inserted) and keeps grantees from
    ///   setting unique values of another owner's rows; a deferred constraint trigger that checks both at
    ///   commit; a statement trigger listing the rows a service transaction inserted; and one that drops
    ///   the shares of deleted rows (of that class only).
    ///
    /// Policies are built the fast way: every function call is wrapped in `(SELECT …)` so it runs once
    /// per statement, the share closure is an array the primary key can be probed with, and a user's
    /// policy is `owner_id = me OR id = ANY (shared)`, which PostgreSQL answers with a BitmapOr of the
    /// `owner_id` and primary-key indexes. Each policy carries a fingerprint of its definition
    /// (`COMMENT ON POLICY`), so a store created by an older PGModel gets the new definition.
    ///
    /// Only the tables of `entities`' hierarchies (and join tables touching them) when given: a
    /// registration renders the store-wide part from every registered entity and the per-table part for
    /// what it registers.
    ///
    /// ```swift
    /// for sql in renderer.createStatements() + renderer.securityStatements() { try await execute(sql) }
    /// ```
    public func securityStatements(tablesOf entities: Set<String>? = nil) -> [String] {
        var statements = storeSecurityStatements()
        // Last of the store-wide part, so a store is marked only once all of it ran (see securityMarker).
        let marker = literal(Self.securityMarker(of: statements))
        statements.append(ifNot(
            "coalesce(obj_description(to_regprocedure(\(literal(securityMarkerFunction))), 'pg_proc') = \(marker), false)",
            "COMMENT ON FUNCTION \(securityMarkerFunction) IS \(marker)"))
        let (roots, joins) = securedTables(of: entities)
        for root in roots { statements += modelTableSecurity(root) }
        for join in joins { statements += joinTableSecurity(join) }
        return statements
    }

    /// The qualified model and join tables ``securityStatements(tablesOf:)`` secures for `entities`
    /// (every table when nil).
    public func securedTableNames(of entities: Set<String>? = nil) -> [String] {
        let (roots, joins) = securedTables(of: entities)
        return roots.map { qualifiedTable(named: $0.tableName) } + joins.map { qualifiedTable(named: $0.table) }
    }

    private func securedTables(of entities: Set<String>?) -> (roots: [EntityDescription], joins: [JoinTableLayout]) {
        let rootTables = entities.map { names in Set(names.compactMap { schema.rootEntity(of: $0)?.tableName }) }
        let roots = schema.entities.filter { entity in
            entity.superentity == nil && (rootTables?.contains(entity.tableName) ?? true)
        }
        let joins = joinTables().filter { join in
            rootTables.map { $0.contains(join.sourceTable) || $0.contains(join.destinationTable) } ?? true
        }
        return (roots, joins)
    }

    /// What row-level security needs once per store, from every entity of the schema: the cascade links
    /// view, the shared-ids function and the history functions.
    private func storeSecurityStatements() -> [String] {
        let schemaQuoted = Naming.quoted(schemaName)
        let role = Self.applicationRole
        let links = "\(schemaQuoted).\"pgmodel_cascade_links\""
        let linksSelect = cascadeLinksSelect()
        let linksComment = "PGModel: every .cascade edge of the schema (parent owns child); what a share of the parent covers. "
            + "Definition \(Self.fingerprint(linksSelect))"
        // Each statement first checks the catalog: DDL takes table locks, and a registration that changes
        // nothing must not queue behind (or deadlock with) other clients' saves.
        var statements = [
            ifNot("has_schema_privilege('\(role)', \(literal(schemaName)), 'USAGE')", "GRANT USAGE ON SCHEMA \(schemaQuoted) TO \(role)"),
            ifNot("coalesce(obj_description(to_regclass(\(literal(links))), 'pg_class') = \(literal(linksComment)), false)",
                  "CREATE OR REPLACE VIEW \(links) AS \(linksSelect); COMMENT ON VIEW \(links) IS \(literal(linksComment))"),
        ]
        let function = "\(schemaQuoted).\"pgmodel_shared_ids\""
        statements.append(definerPLFunction(function, arguments: "p_root text, p_write boolean, p_children boolean",
                                            types: "text, boolean, boolean", returns: "uuid[]", body: sharedIDsBody()))
        statements.append(definerPLFunction("\(schemaQuoted).\"pgmodel_shared_keys\"", arguments: "", types: "",
                                            returns: "text[]", body: sharedKeysBody()))
        statements.append(sharedKeysForStatement())
        // The closure of an older PGModel matched ids alone: a table still secured with it (not registered
        // since) sees no shares rather than another class's.
        statements.append(definerPLFunction(function, arguments: "p_write boolean, p_children boolean", types: "boolean, boolean",
                                            returns: "uuid[]", body: " BEGIN RETURN '{}'; END "))
        statements += historyFunctions()
        if let roots = shareRootsStatement() { statements.append(roots) }
        return statements
    }

    /// The function whose comment says which store-wide row-level security the schema has:
    /// `pgmodel_share_audience`, the newest per-schema function.
    public var securityMarkerFunction: String { "\(Naming.quoted(schemaName)).\"pgmodel_share_audience\"(text[], uuid[])" }

    /// The comment ``securityStatements(tablesOf:)`` leaves on ``securityMarkerFunction``: a fingerprint of
    /// the store-wide statements, so a store whose cascade view or functions were made by another
    /// PGModel, or for other entities, is told apart with one catalog read.
    public var securityMarker: String { Self.securityMarker(of: storeSecurityStatements()) }

    private static func securityMarker(of storeStatements: [String]) -> String {
        "PGModel row-level security " + fingerprint(storeStatements.joined(separator: ";\n"))
    }

    /// The comment of every table's `pgmodel_admin_all` policy, the newest per-table object: a table
    /// without it has an older PGModel's policies and gets its table statements again.
    public static var adminPolicyComment: String {
        policyComment(adminPolicyDefinition)
    }

    /// The layout every per-table policy and trigger belongs to: part of each policy's fingerprint, so
    /// tables secured by a PGModel whose functions took other arguments (shares matched by id alone)
    /// get every statement again, and not only the store-wide ones.
    static let tableLayout = "shares keyed by root class and id; write checks as of before the statement; cascade edges need write access"

    static func policyComment(_ definition: String) -> String {
        "PGModel policy " + fingerprint(definition + "\n" + tableLayout)
    }

    private static var adminPolicyDefinition: String {
        let isAdmin = "\(isRole(adminRole)) AND (SELECT \"pgmodel\".\"current_user_is_admin\"())"
        return "TO \(adminRole) USING (\(isAdmin)) WITH CHECK (\(isAdmin))"
    }

    /// Whether the statement runs as `role`, as a sub-select: PostgreSQL evaluates it once per statement
    /// (an InitPlan) rather than calling `current_user` for every row, which on a large scan costs more
    /// than the scan itself.
    static func isRole(_ role: String) -> String {
        "(SELECT current_user = '\(role)')"
    }

    /// `DO` block running `statements` unless `condition` holds.
    private func ifNot(_ condition: String, _ statements: String) -> String {
        "DO $pgmodel$ BEGIN IF NOT (\(condition)) THEN \(statements); END IF; END $pgmodel$"
    }

    /// Whether the application role holds SELECT, INSERT and DELETE on `table` (a comma-separated list in
    /// one has_table_privilege would mean any of them).
    private func hasRowPrivileges(_ table: String) -> String {
        ["SELECT", "INSERT", "DELETE"].map { "has_table_privilege('\(Self.applicationRole)', \(literal(table)), '\($0)')" }.joined(separator: " AND ")
    }

    /// ENABLE and FORCE row-level security unless both are on.
    private func enableRowSecurity(_ table: String) -> String {
        ifNot("EXISTS (SELECT 1 FROM pg_class WHERE oid = \(literal(table))::regclass AND relrowsecurity AND relforcerowsecurity)",
              "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY; ALTER TABLE \(table) FORCE ROW LEVEL SECURITY")
    }

    /// A short, stable fingerprint of a definition (FNV-1a), to tell whether the database has it already.
    static func fingerprint(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    // MARK: Model tables

    private func modelTableSecurity(_ root: EntityDescription) -> [String] {
        let table = qualifiedTable(named: root.tableName)
        let role = Self.applicationRole
        let me = "(SELECT \"pgmodel\".\"current_user_id\"())"
        func shared(write: Bool, children: Bool) -> String {
            "\"id\" = ANY ((SELECT \(Naming.quoted(schemaName)).\"pgmodel_shared_ids\"(\(literal(root.name)), \(write), \(children)))::uuid[])"
        }
        let isApp = Self.isRole(role)
        let canRead = "\(isApp) AND (\"owner_id\" = \(me) OR \(shared(write: false, children: false)))"
        let canWrite = "\(isApp) AND (\"owner_id\" = \(me) OR \(shared(write: true, children: false)))"
        let canDelete = "\(isApp) AND (\"owner_id\" = \(me) OR \(shared(write: true, children: true)))"
        let canInsert = "\(isApp) AND (\"owner_id\" = \(me) OR \"owner_id\" = ANY ((SELECT \"pgmodel\".\"read_write_sharers\"(\(literal(schemaName))))::uuid[]))"
        var statements = [
            enableRowSecurity(table),
            createPolicy("pgmodel_owner", on: table, "TO CURRENT_USER USING (true) WITH CHECK (true)"),
            createPolicy("pgmodel_app_select", on: table, "FOR SELECT TO \(role) USING (\(canRead))"),
            createPolicy("pgmodel_app_insert", on: table, "FOR INSERT TO \(role) WITH CHECK (\(canInsert))"),
            createPolicy("pgmodel_app_update", on: table, "FOR UPDATE TO \(role) USING (\(canWrite)) WITH CHECK (\(canWrite))"),
            createPolicy("pgmodel_app_delete", on: table, "FOR DELETE TO \(role) USING (\(canDelete))"),
            createPolicy("pgmodel_admin_all", on: table, Self.adminPolicyDefinition),
            ifNot(hasRowPrivileges(table), "GRANT SELECT, INSERT, DELETE ON \(table) TO \(role)"),
        ]
        let attributes = schema.tableAttributes(ofRoot: root.name).map(\.attribute.columnName)
        let foreignKeys = schema.tableForeignKeys(ofRoot: root.name)
        let updatable = attributes + foreignKeys.map(\.relationship.foreignKeyColumn)
        if !updatable.isEmpty {
            let granted = updatable.map { "has_column_privilege('\(role)', \(literal(table)), \(literal($0)), 'UPDATE')" }.joined(separator: " AND ")
            statements.append(ifNot(granted, "GRANT UPDATE (\(updatable.map(Naming.quoted).joined(separator: ", "))) ON \(table) TO \(role)"))
        }
        // The triggers' arguments are the schema's own names: the layout, the root class, the columns of
        // uniqueness constraints per owner, then triples of foreign-key column, referenced table and (for a
        // `.cascade` edge) the referenced root class. Constraints across all users are left out: they
        // compare a grantee's value with everyone's rows, the owner's no more than any other user's, so
        // the answer ("taken") is one the grantee gets from an insert of their own.
        var uniqueColumns: [String] = []
        for name in schema.entityNames(inHierarchyOf: root.name) {
            guard let entity = schema.entity(named: name) else { continue }
            for group in entity.uniquenessConstraints where group.scope == .owner {
                for column in group.attributes.compactMap({ constraintColumn($0, of: entity) }) where !uniqueColumns.contains(column) {
                    uniqueColumns.append(column)
                }
            }
        }
        var arguments = [literal("v3"), literal(root.name), literal(uniqueColumns.joined(separator: ","))]
        for (relationship, _) in foreignKeys {
            guard let destination = schema.rootEntity(of: relationship.destination) else { continue }
            // A key that is a `.cascade` edge (either way) names the referenced root class: a grantee may
            // point it only at a row they may write, so a read-only row never joins a read-write share.
            let ownership = relationship.deleteRule == .cascade || schema.inverse(of: relationship)?.deleteRule == .cascade
            arguments += [literal(relationship.foreignKeyColumn), literal(qualifiedTable(named: destination.tableName)),
                          literal(ownership ? destination.name : "")]
        }
        // Named after its arguments: a grown schema (a new foreign key) replaces it, an unchanged one
        // leaves it alone.
        let trigger = "pgmodel_check_row_" + Self.fingerprint(arguments.joined(separator: ","))
        let checkRow = "CREATE CONSTRAINT TRIGGER \(Naming.quoted(trigger)) AFTER INSERT OR UPDATE ON \(table) "
            + "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (current_user = '\(role)') "
            + "EXECUTE FUNCTION \"pgmodel\".\"check_row\"(\(arguments.joined(separator: ", ")))"
        statements.append(replaceTrigger(on: table, named: trigger, family: "pgmodel\\_check\\_row%", checkRow))
        // Only rows of another owner: a user's own row is in no share made to them (a share reaches rows of
        // its owner only), so an edge from it never makes a hidden row visible to them, and the commit-time
        // check alone keeps its references to rows they can see.
        let when = "WHEN (current_user = '\(role)' AND NEW.\"owner_id\" IS DISTINCT FROM \"pgmodel\".\"current_user_id\"())"
        let references = "pgmodel_check_references_" + Self.fingerprint(when + arguments.joined(separator: ","))
        statements.append(replaceTrigger(on: table, named: references, family: "pgmodel\\_check\\_references%",
            "CREATE TRIGGER \(Naming.quoted(references)) BEFORE INSERT OR UPDATE ON \(table) FOR EACH ROW \(when) "
                + "EXECUTE FUNCTION \"pgmodel\".\"check_references\"(\(arguments.joined(separator: ", ")))"))
        let forget = "pgmodel_forget_shares_" + Self.fingerprint(root.name)
        statements.append(replaceTrigger(on: table, named: forget, family: "pgmodel\\_forget\\_shares%",
            "CREATE TRIGGER \(Naming.quoted(forget)) AFTER DELETE ON \(table) "
                + "REFERENCING OLD TABLE AS \"pgmodel_deleted_rows\" FOR EACH STATEMENT EXECUTE FUNCTION \"pgmodel\".\"forget_shares\"(\(literal(root.name)))"))
        statements.append(replaceTrigger(on: table, named: "pgmodel_note_new_rows", family: "pgmodel\\_note\\_new\\_rows%",
            "CREATE TRIGGER \"pgmodel_note_new_rows\" AFTER INSERT ON \(table) "
                + "REFERENCING NEW TABLE AS \"pgmodel_inserted_rows\" FOR EACH STATEMENT EXECUTE FUNCTION \"pgmodel\".\"note_new_rows\"()"))
        return statements
    }

    /// `create` (a trigger named `name`) unless `table` has it, after dropping the older triggers of its
    /// family (a `LIKE` pattern): a grown schema (a new foreign key) or a new layout replaces them, an
    /// unchanged one leaves them alone.
    private func replaceTrigger(on table: String, named name: String, family: String, _ create: String) -> String {
        """
        DO $pgmodel$ DECLARE old text; BEGIN \
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = \(literal(table))::regclass AND tgname = \(literal(name))) THEN \
        FOR old IN SELECT tgname FROM pg_trigger WHERE tgrelid = \(literal(table))::regclass AND tgname LIKE \(literal(family)) LOOP \
        EXECUTE format('DROP TRIGGER %I ON \(table.replacingOccurrences(of: "'", with: "''"))', old); END LOOP; \
        \(create); \
        END IF; END $pgmodel$
        """
    }

    // MARK: Join tables

    private func joinTableSecurity(_ join: JoinTableLayout) -> [String] {
        let table = qualifiedTable(named: join.table)
        let role = Self.applicationRole
        let me = "(SELECT \"pgmodel\".\"current_user_id\"())"
        func shared(_ target: String) -> String {
            let root = schema.entities.first { $0.superentity == nil && $0.tableName == target }?.name ?? target
            return "((SELECT \(Naming.quoted(schemaName)).\"pgmodel_shared_ids\"(\(literal(root)), true, false))::uuid[])"
        }
        func visible(_ column: String, _ target: String) -> String {
            "EXISTS (SELECT 1 FROM \(qualifiedTable(named: target)) AS \"r\" WHERE \"r\".\"id\" = \(Naming.quoted(join.table)).\(Naming.quoted(column)))"
        }
        func writable(_ column: String, _ target: String) -> String {
            "EXISTS (SELECT 1 FROM \(qualifiedTable(named: target)) AS \"w\" WHERE \"w\".\"id\" = \(Naming.quoted(join.table)).\(Naming.quoted(column)) "
                + "AND (\"w\".\"owner_id\" = \(me) OR \"w\".\"id\" = ANY \(shared(target))))"
        }
        // A row the writer inserted in this transaction (listed as it was inserted, never judged by xmin)
        // counts as visible and writable: a child they add to a shared record belongs to its owner and is
        // visible to them only once linked. Everything else is judged as before the statement: the policy's
        // subqueries do not see the row being inserted.
        func new(_ column: String, _ target: String) -> String {
            "\"pgmodel\".\"is_new_row\"(\(literal(qualifiedTable(named: target)))::regclass, \(Naming.quoted(join.table)).\(Naming.quoted(column)))"
        }
        let isApp = Self.isRole(role)
        let source = (join.sourceColumn, join.sourceTable), destination = (join.destinationColumn, join.destinationTable)
        let canRead = "\(isApp) AND \(visible(source.0, source.1)) AND \(visible(destination.0, destination.1))"
        var canInsert = "\(isApp) AND (\(visible(source.0, source.1)) OR \(new(source.0, source.1))) "
            + "AND (\(visible(destination.0, destination.1)) OR \(new(destination.0, destination.1))) "
            + "AND (\(writable(source.0, source.1)) OR \(writable(destination.0, destination.1)) OR \(new(source.0, source.1)) OR \(new(destination.0, destination.1)))"
        var canDelete = "\(canRead) AND (\(writable(source.0, source.1)) OR \(writable(destination.0, destination.1)))"
        // A `.cascade` link is an edge of ownership: a share of the parent covers the child. Making one
        // needs write access to both sides (a read-only row would otherwise become writable through a
        // read-write share, or a read-only record would gain members); removing one needs write access
        // to the parent.
        var parents: [(String, String)] = []
        if join.sourceOwnsDestination { parents.append(source) }
        if join.destinationOwnsSource { parents.append(destination) }
        if !parents.isEmpty {
            canInsert += " AND (\(writable(source.0, source.1)) OR \(new(source.0, source.1)))"
                + " AND (\(writable(destination.0, destination.1)) OR \(new(destination.0, destination.1)))"
            canDelete += parents.map { " AND \(writable($0.0, $0.1))" }.joined()
        }
        return [
            enableRowSecurity(table),
            createPolicy("pgmodel_owner", on: table, "TO CURRENT_USER USING (true) WITH CHECK (true)"),
            createPolicy("pgmodel_app_select", on: table, "FOR SELECT TO \(role) USING (\(canRead))"),
            createPolicy("pgmodel_app_insert", on: table, "FOR INSERT TO \(role) WITH CHECK (\(canInsert))"),
            createPolicy("pgmodel_app_delete", on: table, "FOR DELETE TO \(role) USING (\(canDelete))"),
            createPolicy("pgmodel_admin_all", on: table, Self.adminPolicyDefinition),
            ifNot(hasRowPrivileges(table), "GRANT SELECT, INSERT, DELETE ON \(table) TO \(role)"),
        ]
    }

    // MARK: The share closure

    /// `SELECT parent_id, child_id, child_owner, child_entity, parent_root, child_root` over every `.cascade`
    /// relationship, whatever its storage: the roots name both sides' hierarchies, since ids may repeat
    /// across them.
    func cascadeLinksSelect() -> String {
        var parts: [String] = []
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.deleteRule == .cascade
                && schema.declaringEntity(of: relationship.name, in: entity).name == entity.name {
                guard let parentRoot = schema.rootEntity(of: entity.name),
                      let childRoot = schema.rootEntity(of: relationship.destination) else { continue }
                let parentTable = qualifiedTable(named: parentRoot.tableName)
                let childTable = qualifiedTable(named: childRoot.tableName)
                // Both sides' root classes: ids may repeat across hierarchies, so an edge names its tables.
                let roots = ", \(literal(parentRoot.name))::text AS \"parent_root\", \(literal(childRoot.name))::text AS \"child_root\""
                let part: String
                switch schema.storage(of: relationship, in: entity) {
                case .inverseForeignKey(let column):
                    part = "SELECT \"c\".\(Naming.quoted(column)) AS \"parent_id\", \"c\".\"id\" AS \"child_id\", \"c\".\"owner_id\" AS \"child_owner\", \"c\".\"entity\" AS \"child_entity\"\(roots) "
                        + "FROM \(childTable) AS \"c\" WHERE \"c\".\(Naming.quoted(column)) IS NOT NULL"
                case .foreignKey(let column):
                    part = "SELECT \"p\".\"id\" AS \"parent_id\", \"c\".\"id\" AS \"child_id\", \"c\".\"owner_id\" AS \"child_owner\", \"c\".\"entity\" AS \"child_entity\"\(roots) FROM \(parentTable) AS \"p\" "
                        + "JOIN \(childTable) AS \"c\" ON \"c\".\"id\" = \"p\".\(Naming.quoted(column))"
                case .joinTable(let table, let sourceColumn, let destinationColumn):
                    part = "SELECT \"j\".\(Naming.quoted(sourceColumn)) AS \"parent_id\", \"j\".\(Naming.quoted(destinationColumn)) AS \"child_id\", \"c\".\"owner_id\" AS \"child_owner\", \"c\".\"entity\" AS \"child_entity\"\(roots) "
                        + "FROM \(qualifiedTable(named: table)) AS \"j\" JOIN \(childTable) AS \"c\" ON \"c\".\"id\" = \"j\".\(Naming.quoted(destinationColumn))"
                }
                if !parts.contains(part) { parts.append(part) }
            }
        }
        if parts.isEmpty {
            return "SELECT NULL::uuid AS \"parent_id\", NULL::uuid AS \"child_id\", NULL::uuid AS \"child_owner\", NULL::text AS \"child_entity\", "
                + "NULL::text AS \"parent_root\", NULL::text AS \"child_root\" WHERE false"
        }
        return parts.joined(separator: " UNION ALL ")
    }

    /// `WITH RECURSIVE … "reached"("root", "entity", "id", "owner")`: the rows shared with the requesting
    /// user in this store (read-write ones only when `write`), with their root classes and classes: the
    /// shared records and every row they own through cascades, transitively; with `children`, only what
    /// the records own. A share names its record by root class and id and covers it only while the row has
    /// the share's owner, so a share of one class never reaches a row of another with the same id, and a
    /// share row written by hand for someone else's row covers nothing. A cascade reaches only rows of the
    /// record's owner, so a share can never expose a third user's row.
    private func shareClosure(write: String, children: String) -> String {
        let schemaQuoted = Naming.quoted(schemaName)
        let links = "\(schemaQuoted).\"pgmodel_cascade_links\""
        var roots: [String] = []
        for root in schema.entities where root.superentity == nil {
            roots.append("SELECT \(literal(root.name))::text AS \"root\", t.\"entity\" AS \"entity\", s.\"row_id\" AS \"id\", s.\"owner_id\" AS \"owner\" "
                + "FROM \"pgmodel\".\"shares\" s JOIN \(qualifiedTable(named: root.tableName)) t "
                + "ON t.\"id\" = s.\"row_id\" AND t.\"owner_id\" IS NOT DISTINCT FROM s.\"owner_id\" "
                + "WHERE s.\"schema_name\" = \(literal(schemaName)) AND s.\"root_entity\" = \(literal(root.name)) "
                + "AND s.\"grantee_id\" = \"pgmodel\".\"current_user_id\"() AND (NOT \(write) OR s.\"permission\" = 'readWrite')")
        }
        if roots.isEmpty { roots = ["SELECT NULL::text, NULL::text, NULL::uuid, NULL::uuid WHERE false"] }
        return """
            WITH RECURSIVE "roots"("root", "entity", "id", "owner") AS (\(roots.joined(separator: " UNION ALL "))), \
            "reached"("root", "entity", "id", "owner") AS (\
            SELECT "root", "entity", "id", "owner" FROM "roots" WHERE NOT \(children) \
            UNION SELECT l."child_root", l."child_entity", l."child_id", r."owner" FROM "roots" r JOIN \(links) l \
            ON l."parent_root" = r."root" AND l."parent_id" = r."id" AND l."child_owner" IS NOT DISTINCT FROM r."owner" WHERE \(children) \
            UNION SELECT l."child_root", l."child_entity", l."child_id", r."owner" FROM "reached" r JOIN \(links) l \
            ON l."parent_root" = r."root" AND l."parent_id" = r."id" AND l."child_owner" IS NOT DISTINCT FROM r."owner") 
            """
    }

    /// A user without shares in the store (the common case) is answered by one index probe.
    private var noSharesHere: String {
        """
        IF NOT EXISTS (SELECT 1 FROM "pgmodel"."shares" s \
        WHERE s."schema_name" = \(literal(schemaName)) AND s."grantee_id" = "pgmodel"."current_user_id"()) \
        THEN RETURN '{}'; END IF;
        """
    }

    /// The body of `pgmodel_shared_ids(root, write, children)`: the ids of the shared rows of one hierarchy
    /// (see ``shareClosure(write:children:)``). SECURITY DEFINER: it reads the model tables as their
    /// owner, so policies never recurse into it.
    ///
    /// plpgsql, not sql: every policy calls it once per statement, and PostgreSQL plans a sql function
    /// with a SET clause again on every call (most of a service point fetch's database time),
    /// while plpgsql keeps its plans for the session.
    private func sharedIDsBody() -> String {
        """
         BEGIN \(noSharesHere) RETURN (\(shareClosure(write: "p_write", children: "p_children"))\
        SELECT coalesce(array_agg(DISTINCT "id"), '{}') FROM "reached" WHERE "root" = p_root); END 
        """
    }

    /// The body of `pgmodel_shared_keys()`: every row shared with the requesting user as `id class` (its
    /// concrete class), what history matches changes against (`pgmodel.shared_row_keys`).
    private func sharedKeysBody() -> String {
        """
         BEGIN \(noSharesHere) RETURN (\(shareClosure(write: "false", children: "false"))\
        SELECT coalesce(array_agg(DISTINCT "id"::text || ' ' || "entity"), '{}') FROM "reached"); END 
        """
    }

    /// `pgmodel_shared_keys_for(user)`: the keys `pgmodel_shared_keys()` gives `user`, as
    /// `pgmodel.shared_row_keys()` lists them (`id class store`), for the service's history fan-out,
    /// which judges many users' history in one query (`HistorySQL.audienceVisibility`). It runs the very
    /// closure the policies use, under that user's id (a transaction-local setting, put back after).
    /// The database owner's only: it tells about anyone's shares, so the application role may not call it.
    private func sharedKeysForStatement() -> String {
        let schemaQuoted = Naming.quoted(schemaName)
        let function = "\(schemaQuoted).\"pgmodel_shared_keys_for\""
        let body = """
             DECLARE previous text := current_setting('pgmodel.user_id', true); keys text[]; \
            BEGIN IF p_user IS NULL THEN RETURN '{}'; END IF; \
            PERFORM set_config('pgmodel.user_id', p_user::text, true); \
            keys := ARRAY(SELECT k || ' ' || \(literal(schemaName)) FROM unnest(\(schemaQuoted)."pgmodel_shared_keys"()) AS k); \
            PERFORM set_config('pgmodel.user_id', coalesce(previous, ''), true); RETURN keys; END 
            """
        return ifNot(
            "EXISTS (SELECT 1 FROM pg_proc WHERE oid = to_regprocedure(\(literal(function + "(uuid)"))) AND prosrc = \(literal(body)))",
            """
            CREATE OR REPLACE FUNCTION \(function)(p_user uuid) RETURNS text[] \
            LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$\(body)$fn$; \
            REVOKE ALL ON FUNCTION \(function)(uuid) FROM PUBLIC
            """)
    }

    /// `pgmodel_share_members(root class, root, owner)`: the rows a share of a record covers besides itself,
    /// with their classes, for the history events of a share or revocation. `pgmodel_share_audience(root
    /// classes, ids)`: for rows about to be deleted, the users whose shares cover them, so their history
    /// shows the delete. Both SECURITY DEFINER; a service user learns only about records they own,
    /// administer or may delete. Both follow edges by root class and id, as the closure does.
    private func historyFunctions() -> [String] {
        let schemaQuoted = Naming.quoted(schemaName)
        let role = Self.applicationRole
        let links = "\(schemaQuoted).\"pgmodel_cascade_links\""
        /// Whether the caller may ask: anyone but the service's two roles, an admin, or what `also` says.
        func mayAsk(or also: String) -> String {
            "(current_setting('role') NOT IN ('\(role)', '\(Self.adminRole)') OR \"pgmodel\".\"current_user_is_admin\"() OR \(also))"
        }
        let members = """
             WITH RECURSIVE "reached"("root", "id", "entity") AS (\
            SELECT l."child_root", l."child_id", l."child_entity" FROM \(links) l \
            WHERE l."parent_root" = p_entity AND l."parent_id" = p_root AND l."child_owner" IS NOT DISTINCT FROM p_owner \
            AND \(mayAsk(or: "p_owner = \"pgmodel\".\"current_user_id\"()")) \
            UNION SELECT l."child_root", l."child_id", l."child_entity" FROM "reached" r JOIN \(links) l \
            ON l."parent_root" = r."root" AND l."parent_id" = r."id" AND l."child_owner" IS NOT DISTINCT FROM p_owner) \
            SELECT "id", "entity" FROM "reached" 
            """
        let audience = """
             WITH RECURSIVE "up"("root", "id", "ancestor_root", "ancestor", "owner", "known") AS (\
            SELECT x."root", x."id", x."root", x."id", NULL::uuid, false FROM unnest(p_roots, p_ids) AS x("root", "id") \
            WHERE EXISTS (SELECT 1 FROM "pgmodel"."shares" s WHERE s."schema_name" = \(literal(schemaName))) \
            UNION SELECT u."root", u."id", l."parent_root", l."parent_id", l."child_owner", true FROM "up" u JOIN \(links) l \
            ON l."child_root" = u."ancestor_root" AND l."child_id" = u."ancestor" AND (NOT u."known" OR l."child_owner" IS NOT DISTINCT FROM u."owner")) \
            SELECT u."root", u."id", array_agg(DISTINCT s."grantee_id") FROM "up" u JOIN "pgmodel"."shares" s \
            ON s."schema_name" = \(literal(schemaName)) AND s."root_entity" = u."ancestor_root" AND s."row_id" = u."ancestor" \
            AND (NOT u."known" OR s."owner_id" IS NOT DISTINCT FROM u."owner") \
            WHERE \(mayAsk(or: "s.\"owner_id\" = \"pgmodel\".\"current_user_id\"() OR u.\"id\" = ANY (\(schemaQuoted).\"pgmodel_shared_ids\"(u.\"root\", true, true))")) \
            GROUP BY u."root", u."id" 
            """
        return [
            definerFunction("pgmodel_share_members", arguments: "p_entity text, p_root uuid, p_owner uuid", types: "text, uuid, uuid",
                            returns: "TABLE (\"id\" uuid, \"entity\" text)", body: members),
            definerFunction("pgmodel_share_audience", arguments: "p_roots text[], p_ids uuid[]", types: "text[], uuid[]",
                            returns: "TABLE (\"root\" text, \"id\" uuid, \"grantees\" uuid[])", body: audience),
            // Their forms that matched ids alone go, unless already gone.
            ifNot("to_regprocedure(\(literal("\(schemaQuoted).\"pgmodel_share_members\"(uuid, uuid)"))) IS NULL",
                  "DROP FUNCTION \(schemaQuoted).\"pgmodel_share_members\"(uuid, uuid)"),
            ifNot("to_regprocedure(\(literal("\(schemaQuoted).\"pgmodel_share_audience\"(uuid[])"))) IS NULL",
                  "DROP FUNCTION \(schemaQuoted).\"pgmodel_share_audience\"(uuid[])"),
        ]
    }

    /// A STABLE SECURITY DEFINER plpgsql function (`function` qualified and quoted), replaced only when
    /// its body changed, and executable by the application role only.
    private func definerPLFunction(_ function: String, arguments: String, types: String, returns: String, body: String) -> String {
        ifNot(
            "EXISTS (SELECT 1 FROM pg_proc WHERE oid = to_regprocedure(\(literal(function + "(" + types + ")"))) AND prosrc = \(literal(body)))",
            """
            CREATE OR REPLACE FUNCTION \(function)(\(arguments)) RETURNS \(returns) \
            LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$\(body)$fn$; \
            REVOKE ALL ON FUNCTION \(function)(\(types)) FROM PUBLIC; \
            GRANT EXECUTE ON FUNCTION \(function)(\(types)) TO \(Self.applicationRole)
            """)
    }

    /// Shares made before shares named their root class recorded the record's own class there: a
    /// subclass's name becomes its hierarchy's root (what the share was made for), once.
    private func shareRootsStatement() -> String? {
        var pairs: [String] = []
        for entity in schema.entities where entity.superentity != nil {
            guard let root = schema.rootEntity(of: entity.name), root.name != entity.name else { continue }
            pairs.append("(\(literal(entity.name)), \(literal(root.name)))")
        }
        guard !pairs.isEmpty else { return nil }
        let map = "(VALUES \(pairs.joined(separator: ", "))) AS m(\"sub\", \"root\")"
        return ifNot(
            "NOT EXISTS (SELECT 1 FROM \"pgmodel\".\"shares\" s, \(map) WHERE s.\"schema_name\" = \(literal(schemaName)) AND s.\"root_entity\" = m.\"sub\")",
            "UPDATE \"pgmodel\".\"shares\" s SET \"root_entity\" = m.\"root\" FROM \(map) "
                + "WHERE s.\"schema_name\" = \(literal(schemaName)) AND s.\"root_entity\" = m.\"sub\" "
                + "AND NOT EXISTS (SELECT 1 FROM \"pgmodel\".\"shares\" t WHERE t.\"schema_name\" = s.\"schema_name\" "
                + "AND t.\"root_entity\" = m.\"root\" AND t.\"row_id\" = s.\"row_id\" AND t.\"grantee_id\" = s.\"grantee_id\")")
    }

    /// A STABLE SECURITY DEFINER SQL function of this schema, replaced only when its body changed, and
    /// executable by the application role only.
    private func definerFunction(_ name: String, arguments: String, types: String, returns: String, body: String) -> String {
        let function = "\(Naming.quoted(schemaName)).\(Naming.quoted(name))"
        return ifNot(
            "EXISTS (SELECT 1 FROM pg_proc WHERE oid = to_regprocedure(\(literal(function + "(" + types + ")"))) AND prosrc = \(literal(body)))",
            """
            CREATE OR REPLACE FUNCTION \(function)(\(arguments)) RETURNS \(returns) \
            LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$\(body)$fn$; \
            REVOKE ALL ON FUNCTION \(function)(\(types)) FROM PUBLIC; \
            GRANT EXECUTE ON FUNCTION \(function)(\(types)) TO \(Self.applicationRole)
            """)
    }

    // MARK: Helpers

    /// A join table's name and its two sides.
    struct JoinTableLayout: Equatable {
        var table: String
        var sourceColumn: String
        var sourceTable: String
        var destinationColumn: String
        var destinationTable: String
        /// The relationship stored here is `.cascade` from the source side: a source row owns its links' rows.
        var sourceOwnsDestination = false
        /// Its inverse is `.cascade`: a destination row owns its links' rows.
        var destinationOwnsSource = false
    }

    /// Every join table of the schema, once.
    func joinTables() -> [JoinTableLayout] {
        var result: [JoinTableLayout] = []
        for entity in schema.entities {
            for relationship in entity.relationships where schema.declaringEntity(of: relationship.name, in: entity).name == entity.name {
                guard case .joinTable(let table, let source, let destination) = schema.storage(of: relationship, in: entity),
                      let sourceRoot = schema.rootEntity(of: entity.name),
                      let destinationRoot = schema.rootEntity(of: relationship.destination),
                      !result.contains(where: { $0.table == table }) else { continue }
                result.append(JoinTableLayout(table: table, sourceColumn: source, sourceTable: sourceRoot.tableName,
                                              destinationColumn: destination, destinationTable: destinationRoot.tableName,
                                              sourceOwnsDestination: relationship.deleteRule == .cascade,
                                              destinationOwnsSource: schema.inverse(of: relationship)?.deleteRule == .cascade))
            }
        }
        return result
    }

    /// `CREATE POLICY` unless the table has this policy with this definition: the policy's comment is a
    /// fingerprint of its definition, and a policy of that name with another (or no) fingerprint, made by
    /// an older PGModel, is dropped and created again in the same transaction.
    private func createPolicy(_ name: String, on table: String, _ definition: String) -> String {
        let quotedName = Naming.quoted(name)
        let comment = Self.policyComment(definition)
        return """
        DO $pgmodel$ BEGIN \
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polname = \(literal(name)) AND polrelid = \(literal(table))::regclass \
        AND obj_description(oid, 'pg_policy') = \(literal(comment))) THEN \
        DROP POLICY IF EXISTS \(quotedName) ON \(table); \
        CREATE POLICY \(quotedName) ON \(table) \(definition); \
        COMMENT ON POLICY \(quotedName) ON \(table) IS \(literal(comment)); \
        END IF; END $pgmodel$
        """
    }
}
