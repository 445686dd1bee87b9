import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// `pgmodel user export` and `pgmodel user import`, run as the built executable against real PostgreSQL:
/// a user's rows go from one store (schema) to another exactly, with their shares by grantee name, and a
/// file that is wrong in any way writes nothing.
@Suite("CLI: pgmodel user export, user import")
struct UserExportTests {
    /// Folders (a parent folder: a reference between two rows of one table) holding items (a to-many
    /// with a to-one inverse) that have a column of every attribute type, and favorite items (a to-many
    /// without inverse: a join table).
    static func schema(itemAttributes drop: Set<String> = [], retyped: [String: AttributeType] = [:], withItems: Bool = true) -> SchemaDescription {
        let folder = EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "parent", destination: "Folder", isToMany: false),
            RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "folder", deleteRule: .cascade),
            // Without an inverse: a join table (folder_favorites).
            RelationshipDescription(name: "favorites", destination: "Item", isToMany: true),
        ].filter { withItems || $0.destination != "Item" })
        let declared: [AttributeDescription] = [
            .init(name: "title", type: .string), .init(name: "flag", type: .bool), .init(name: "small", type: .int16),
            .init(name: "medium", type: .int32), .init(name: "large", type: .int64), .init(name: "ratio", type: .float),
            .init(name: "score", type: .double), .init(name: "amount", type: .decimal), .init(name: "happenedAt", type: .date),
            .init(name: "token", type: .uuid), .init(name: "blob", type: .data), .init(name: "link", type: .url),
            .init(name: "details", type: .json), .init(name: "tags", type: .stringArray), .init(name: "counts", type: .int64Array),
            .init(name: "weights", type: .doubleArray), .init(name: "switches", type: .boolArray),
            .init(name: "note", type: .string, isOptional: true), .init(name: "maybeAmount", type: .decimal, isOptional: true),
            .init(name: "maybeBlob", type: .data, isOptional: true), .init(name: "maybeDetails", type: .json, isOptional: true),
            .init(name: "maybeTags", type: .stringArray, isOptional: true),
        ]
        let attributes: [AttributeDescription] = declared.filter { !drop.contains($0.name) }.map { (attribute: AttributeDescription) -> AttributeDescription in
            var changed = attribute
            if let type = retyped[attribute.name] { changed.type = type }
            return changed
        }
        let item = EntityDescription(name: "Item", attributes: attributes, relationships: [
            RelationshipDescription(name: "folder", destination: "Folder", isToMany: false, inverse: "items"),
        ])
        return SchemaDescription(entities: withItems ? [folder, item] : [folder])
    }

    static func itemValues(_ seed: Int, folder: UUID, sparse: Bool) -> [String: PGValue] {
        var values: [String: PGValue] = [
            "title": .string("item \(seed) ünïcødé ' \" \\ %_ \n tab\t"), "flag": .bool(seed % 2 == 0), "small": .int(Int64(Int16.min)),
            "medium": .int(Int64(Int32.max)), "large": .int(Int64.max - Int64(seed)), "ratio": .double(Double(Float(0.1))),
            "score": .double(0.1 + 0.2), "amount": .decimal(Decimal(string: "12345678901234567890.123456789") ?? 0),
            "happenedAt": .date(Date(timeIntervalSince1970: 1_700_000_000.123456)), "token": .uuid(UUID()),
            "blob": .data(Data([0, 1, 2, 255, UInt8(seed)])), "link": .string("https://example.com/?q=\(seed)&x=é"),
            "details": .string(seed == 0 ? "null" : #"{"a":[1,2.5,null,12345678901234567890.5],"b":"x","$jsonb":1}"#),
            "tags": .string(#"["a","b,c","","quote\"d"]"#), "counts": .string("[\(Int64.max),-1,0]"),
            "weights": .string("[1.5,1e-300,-0.0]"), "switches": .string("[true,false]"), "folder": .uuid(folder),
        ]
        if sparse {
            for key in ["note", "maybeAmount", "maybeBlob", "maybeDetails", "maybeTags"] { values[key] = .null }
        } else {
            values["note"] = .string("present")
            values["maybeAmount"] = .decimal(Decimal(string: "-0.000000000000000001") ?? 0)
            values["maybeBlob"] = .data(Data())
            values["maybeDetails"] = .string("[]")
            values["maybeTags"] = .string("[]")
        }
        return values
    }

    /// A store with alice's rows (two folders, one inside the other; three items in the first, one with
    /// every optional empty) and mallory's (a folder and an item), alice's first folder shared with bob.
    struct World {
        var schemaName: String
        var url: String
        var alice, bob, mallory: AuthenticatedUser
        var aliceIDs: [UUID]
        var malloryIDs: [UUID]
        var folder: UUID
    }

    static func makeWorld() async throws -> World {
        let schemaName = TestDatabase.uniqueSchema("exp")
        try await ServerTestHarness.register(schema(), schemaName: schemaName)
        let alice = try await ServerTestHarness.makeUser("exp_alice")
        let bob = try await ServerTestHarness.makeUser("exp_bob")
        let mallory = try await ServerTestHarness.makeUser("exp_mallory")
        let root = UUID.v7(), inner = UUID.v7(), items = [UUID.v7(), UUID.v7(), UUID.v7()]
        let theirs = UUID.v7(), theirItem = UUID.v7()
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { engine, connection in
            _ = try await engine.save(SaveRequest(inserts: [
                RowValues(entity: "Folder", id: root, values: ["name": .string("root")]),
                RowValues(entity: "Folder", id: inner, values: ["name": .string("inner"), "parent": .uuid(root)]),
            ] + items.enumerated().map { RowValues(entity: "Item", id: $1, values: itemValues($0, folder: root, sparse: $0 == 1)) },
                links: [LinkChange(entity: "Folder", relationship: "favorites", source: root, destination: items[0], isAdded: true),
                        LinkChange(entity: "Folder", relationship: "favorites", source: root, destination: items[2], isAdded: true)]),
                in: schema(), as: .user(alice), on: connection)
            _ = try await engine.save(SaveRequest(inserts: [
                RowValues(entity: "Folder", id: theirs, values: ["name": .string("mallory's")]),
                RowValues(entity: "Item", id: theirItem, values: itemValues(7, folder: theirs, sparse: false)),
            ], links: [LinkChange(entity: "Folder", relationship: "favorites", source: theirs, destination: theirItem, isAdded: true)]),
                in: schema(), as: .user(mallory), on: connection)
        }
        let url = try SessionRevocationTests.databaseURL(schema: schemaName)
        let shared = try await ShareCommandTests.run(["share", "Folder", root.uuidString.lowercased(), bob.name, "--read-write", "--database-url", url])
        #expect(shared.status == 0, "\(shared.error)")
        return World(schemaName: schemaName, url: url, alice: alice, bob: bob, mallory: mallory,
                     aliceIDs: [root, inner] + items, malloryIDs: [theirs, theirItem], folder: root)
    }

    /// Registers `description` in a fresh schema; returns its name and URL.
    static func target(_ description: SchemaDescription = schema()) async throws -> (schema: String, url: String) {
        let name = TestDatabase.uniqueSchema("imp")
        try await ServerTestHarness.register(description, schemaName: name)
        return (name, try SessionRevocationTests.databaseURL(schema: name))
    }

    /// The schemas a test made, dropped when it ends, pass or fail. Users stay, as in the other suites:
    /// deleting one checks the foreign keys of every model table in the database, which can deadlock with
    /// other suites' schema drops.
    final class Scratch: @unchecked Sendable {
        var schemas: [String] = []

        func add(_ world: World) {
            schemas.append(world.schemaName)
        }

        func clean() async {
            for name in schemas {
                _ = try? await ServerTestHarness.withDatabase(schemaName: name) { engine, connection in try await engine.dropSchema(on: connection) }
            }
        }
    }

    static func withScratch(_ body: (Scratch) async throws -> Void) async throws {
        let scratch = Scratch()
        do {
            try await body(scratch)
        } catch {
            await scratch.clean()
            throw error
        }
        await scratch.clean()
    }

    /// Every row `owner` has in `table` of `schema`, as PostgreSQL's own JSON of the whole row (owner left out), by id.
    static func rows(_ schema: String, _ table: String, owner: UUID) async throws -> [String] {
        try await SessionRevocationTests.sql(
            "SELECT (to_jsonb(t) - 'owner_id')::text FROM \(Naming.quoted(schema)).\(Naming.quoted(table)) t WHERE t.owner_id = $1::uuid ORDER BY t.id",
            [owner.uuidString]).map { $0.first.flatMap { $0 } ?? "" }
    }

    static func count(_ schema: String) async throws -> Int {
        let rows = try await SessionRevocationTests.sql("SELECT ((SELECT count(*) FROM \(Naming.quoted(schema)).folder) + (SELECT count(*) FROM \(Naming.quoted(schema)).item))::text")
        return Int(rows.first?.first.flatMap { $0 } ?? "") ?? -1
    }

    static func export(_ world: World, history: Bool = false) async throws -> (file: URL, lines: [String], summary: [String: Any]) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-export-\(ServerTestHarness.uniqueSuffix()).jsonl")
        let exported = try await ShareCommandTests.run(["user", "export", world.alice.name, "--output", file.path, "--json", "--database-url", world.url] + (history ? ["--history"] : []))
        #expect(exported.status == 0, "\(exported.error)")
        #expect(exported.error.isEmpty, "no progress lines with --json: \(exported.error)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(exported.output.utf8)) as? [String: Any], "\(exported.output)")
        let text = try String(contentsOf: file, encoding: .utf8)
        return (file, text.split(separator: "\n").map(String.init), summary)
    }

    static func write(_ lines: [String]) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pgmodel-import-\(ServerTestHarness.uniqueSuffix()).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    @Test("export then import into another schema gives back every column exactly, the references between the user's rows and the share by grantee name; the file holds no one else's rows")
    func roundTrip() async throws {
        try await Self.withScratch { scratch in
            let world = try await Self.makeWorld()
            scratch.add(world)
            let (target, targetURL) = try await Self.target()
            scratch.schemas += [target]
            let (file, lines, summary) = try await Self.export(world, history: true)
            defer { try? FileManager.default.removeItem(at: file) }

            #expect(summary["rows"] as? [String: Int] == ["Folder": 2, "Item": 3], "\(summary)")
            #expect(summary["shares"] as? Int == 1 && summary["links"] as? Int == 2, "\(summary)")
            #expect((summary["history"] as? Int ?? 0) >= 5, "each inserted row has its history entry: \(summary)")
            #expect((summary["bytes"] as? Int) == (try Data(contentsOf: file)).count)
            let header = Self.object(lines[0])
            #expect(header["format"] as? String == "pgmodel-user-export" && header["version"] as? Int == 1 && header["schema"] as? String == world.schemaName)
            #expect((header["user"] as? [String: Any])?["name"] as? String == world.alice.name)
            #expect((header["entities"] as? [Any])?.count == 2)
            let text = lines.joined(separator: "\n")
            for id in world.malloryIDs { #expect(!text.contains(id.uuidString.lowercased()), "mallory's row \(id) is not in alice's export") }
            let rowIDs = lines.map(Self.object).filter { $0["kind"] as? String == "row" }.compactMap { $0["id"] as? String }
            #expect(Set(rowIDs) == Set(world.aliceIDs.map { $0.uuidString.lowercased() }))
            // bytea as base64, numerics as their digits.
            #expect(text.contains(#""blob": "AAEC/wA=""#) || text.contains(#""blob":"AAEC/wA=""#), "\(text.prefix(3000))")
            #expect(text.contains("12345678901234567890.123456789"))

            let imported = try await ShareCommandTests.run(["user", "import", file.path, "--json", "--database-url", targetURL])
            #expect(imported.status == 0, "\(imported.error)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(imported.output.utf8)) as? [String: Any], "\(imported.output)")
            #expect(report["rows"] as? [String: Int] == ["Folder": 2, "Item": 3], "\(report)")
            #expect(report["shares"] as? Int == 1 && report["links"] as? Int == 2 && report["sharesSkipped"] as? Int == 0 && report["referencesCleared"] as? Int == 0, "\(report)")
            #expect((report["historySkipped"] as? Int ?? 0) >= 5)

            for table in ["folder", "item"] {
                let before = try await Self.rows(world.schemaName, table, owner: world.alice.id)
                let after = try await Self.rows(target, table, owner: world.alice.id)
                #expect(before.count > 0 && before == after, "\(table): \(before) vs \(after)")
            }
            let favorites = { (schema: String) in
                try await SessionRevocationTests.sql("SELECT folder_id::text, favorites_id::text FROM \(Naming.quoted(schema)).folder_favorites WHERE folder_id = $1::uuid ORDER BY 2", [world.folder.uuidString])
            }
            let linked = try await favorites(target)
            let original = try await favorites(world.schemaName)
            #expect(linked.count == 2 && linked == original, "\(linked)")
            let inner = try await SessionRevocationTests.sql("SELECT parent_id::text FROM \(Naming.quoted(target)).folder WHERE name = 'inner'")
            #expect(inner == [[world.folder.uuidString.lowercased()]])
            let shares = try await SessionRevocationTests.sql(
                "SELECT entity, row_id::text, owner, grantee, permission FROM pgmodel.share_list WHERE schema_name = $1", [target])
            #expect(shares == [["Folder", world.folder.uuidString.lowercased(), world.alice.name, world.bob.name, "readWrite"]])

            // Progress lines without --json, one per table.
            let again = try await ShareCommandTests.run(["user", "export", world.alice.name, "--database-url", world.url])
            #expect(again.status == 0 && again.output.split(separator: "\n").count == 1 + 5 + 2 + 1, "\(again.error)")
            #expect(again.error.contains(".folder (Folder): 2 rows") && again.error.contains(".item (Item): 3 rows"), "\(again.error)")
        }
    }

    @Test("an id that exists in the target, whoever owns it, fails the import naming entity and id, and nothing is written")
    func existingIDRefused() async throws {
        try await Self.withScratch { scratch in
            let world = try await Self.makeWorld()
            scratch.add(world)
            let (file, lines, _) = try await Self.export(world)
            defer { try? FileManager.default.removeItem(at: file) }
            // Into the same store as bob: every id is alice's already.
            let refused = try await ShareCommandTests.run(["user", "import", file.path, "--as", world.bob.name, "--database-url", world.url])
            #expect(refused.status != 0)
            #expect(refused.error.contains("[unique_violation]") && refused.error.contains("already exists"), "\(refused.error)")
            #expect(world.aliceIDs.contains { refused.error.contains($0.uuidString.lowercased()) }, "\(refused.error)")
            #expect(try await Self.rows(world.schemaName, "folder", owner: world.bob.id).isEmpty)
            #expect(try await Self.rows(world.schemaName, "item", owner: world.bob.id).isEmpty)

            // One clashing id among new ones: the rest are not written either.
            let (target, targetURL) = try await Self.target()
            scratch.schemas += [target]
            // Alice's inner folder's id, taken in the target by a folder of mallory's.
            let clash = world.aliceIDs[1]
            _ = try await SessionRevocationTests.sql(
                "INSERT INTO \(Naming.quoted(target)).folder (id, entity, owner_id, name) VALUES ($1::uuid, 'Folder', $2::uuid, 'someone else''s')",
                [clash.uuidString, world.mallory.id.uuidString])
            let partial = try await ShareCommandTests.run(["user", "import", file.path, "--database-url", targetURL])
            #expect(partial.status != 0 && partial.error.contains(clash.uuidString.lowercased()) && partial.error.contains("Folder"), "\(partial.error)")
            #expect(try await Self.count(target) == 1, "only mallory's row")
            _ = lines
        }
    }

    @Test("a malformed line, or a value PostgreSQL refuses, fails with the line's number and writes nothing")
    func malformedLine() async throws {
        try await Self.withScratch { scratch in
            let world = try await Self.makeWorld()
            scratch.add(world)
            let (target, targetURL) = try await Self.target()
            scratch.schemas += [target]
            let (file, lines, _) = try await Self.export(world)
            defer { try? FileManager.default.removeItem(at: file) }

            var broken = lines
            broken[3] = #"{"kind":"row","entity":"#
            let brokenFile = try Self.write(broken)
            defer { try? FileManager.default.removeItem(at: brokenFile) }
            let syntax = try await ShareCommandTests.run(["user", "import", brokenFile.path, "--database-url", targetURL])
            #expect(syntax.status != 0 && syntax.error.contains("line 4") && syntax.error.contains("[malformed_message]"), "\(syntax.error)")

            // Valid JSON, a value that is no uuid: PostgreSQL refuses it, the error names the line.
            var badValue = lines
            let index = try #require(badValue.lastIndex { Self.object($0)["entity"] as? String == "Item" && Self.object($0)["kind"] as? String == "row" })
            var row = Self.object(badValue[index])
            var values = row["values"] as? [String: Any] ?? [:]
            values["token"] = "not-a-uuid"
            row["values"] = values
            badValue[index] = Self.json(row)
            let badFile = try Self.write(badValue)
            defer { try? FileManager.default.removeItem(at: badFile) }
            let refused = try await ShareCommandTests.run(["user", "import", badFile.path, "--database-url", targetURL])
            #expect(refused.status != 0 && refused.error.contains("line \(index + 1)"), "\(refused.error)")

            // Not an export at all.
            let other = try Self.write([#"{"hello":"world"}"#])
            defer { try? FileManager.default.removeItem(at: other) }
            let notExport = try await ShareCommandTests.run(["user", "import", other.path, "--database-url", targetURL])
            #expect(notExport.status != 0 && notExport.error.contains("line 1") && notExport.error.contains("[malformed_message]"), "\(notExport.error)")
            #expect(try await Self.count(target) == 0)
        }
    }

    @Test("an entity or a column the target has not registered, or has with another type, is a typed error naming it, and nothing is written")
    func unregisteredEntityOrColumn() async throws {
        try await Self.withScratch { scratch in
            let world = try await Self.makeWorld()
            scratch.add(world)
            let (noItems, noItemsURL) = try await Self.target(Self.schema(withItems: false))
            let (noScore, noScoreURL) = try await Self.target(Self.schema(itemAttributes: ["score"]))
            scratch.schemas += [noItems, noScore]
            let (file, lines, _) = try await Self.export(world)
            defer { try? FileManager.default.removeItem(at: file) }

            let entity = try await ShareCommandTests.run(["user", "import", file.path, "--database-url", noItemsURL])
            #expect(entity.status != 0 && entity.error.contains("[unknown_entity]") && entity.error.contains("'Item'"), "\(entity.error)")
            let folders = try await SessionRevocationTests.sql("SELECT count(*)::text FROM \(Naming.quoted(noItems)).folder")
            #expect(folders == [["0"]])

            let column = try await ShareCommandTests.run(["user", "import", file.path, "--database-url", noScoreURL])
            #expect(column.status != 0 && column.error.contains("[unknown_attribute]") && column.error.contains("'score'") && column.error.contains("Item"), "\(column.error)")
            #expect(try await Self.count(noScore) == 0)

            // The same column with another type there.
            let (retyped, retypedURL) = try await Self.target(Self.schema(retyped: ["score": .string]))
            scratch.schemas += [retyped]
            let mismatch = try await ShareCommandTests.run(["user", "import", file.path, "--database-url", retypedURL])
            #expect(mismatch.status != 0 && mismatch.error.contains("[type_mismatch]") && mismatch.error.contains("'score'"), "\(mismatch.error)")
            #expect(try await Self.count(retyped) == 0)

            // A file naming a column no table of the target has (an attacker's identifier) is refused the same way.
            let (target, targetURL) = try await Self.target()
            scratch.schemas += [target]
            var forged = lines
            var header = Self.object(forged[0])
            var tables = header["tables"] as? [[String: Any]] ?? []
            for i in tables.indices where tables[i]["table"] as? String == "folder" {
                tables[i]["columns"] = (tables[i]["columns"] as? [[String: Any]] ?? []) + [["name": #"name" = 'x'; DROP TABLE pgmodel.users; --"#, "type": "text"]]
            }
            header["tables"] = tables
            forged[0] = Self.json(header)
            let index = try #require(forged.firstIndex { Self.object($0)["entity"] as? String == "Folder" })
            var row = Self.object(forged[index])
            var values = row["values"] as? [String: Any] ?? [:]
            values[#"name" = 'x'; DROP TABLE pgmodel.users; --"#] = "x"
            row["values"] = values
            forged[index] = Self.json(row)
            let forgedFile = try Self.write(forged)
            defer { try? FileManager.default.removeItem(at: forgedFile) }
            let attack = try await ShareCommandTests.run(["user", "import", forgedFile.path, "--database-url", targetURL])
            #expect(attack.status != 0 && attack.error.contains("[unknown_attribute]"), "\(attack.error)")
            #expect(try await Self.count(target) == 0)
            #expect(try await SessionRevocationTests.sql("SELECT (count(*) > 0)::text FROM pgmodel.users")[0] == ["true"])
        }
    }

    @Test("shares go by grantee name: an unknown grantee is skipped and counted; a reference to a row outside the file and not the user's becomes NULL")
    func sharesAndForeignReferences() async throws {
        try await Self.withScratch { scratch in
            let world = try await Self.makeWorld()
            scratch.add(world)
            let (target, targetURL) = try await Self.target()
            scratch.schemas += [target]
            let (file, lines, _) = try await Self.export(world)
            defer { try? FileManager.default.removeItem(at: file) }
            let carol = try await ServerTestHarness.makeUser("exp_carol")

            var edited = lines
            let share = try #require(edited.firstIndex { Self.object($0)["kind"] as? String == "share" })
            var object = Self.object(edited[share])
            object["grantee"] = "nobody_\(ServerTestHarness.uniqueSuffix())"
            edited[share] = Self.json(object)
            // A second share of the same folder, with carol, who exists here.
            object["grantee"] = carol.name
            object["permission"] = "readOnly"
            edited.append(Self.json(object))
            // An item pointing at mallory's folder (not in the file, not alice's in the target once imported).
            let item = try #require(edited.firstIndex { Self.object($0)["entity"] as? String == "Item" })
            var row = Self.object(edited[item])
            var values = row["values"] as? [String: Any] ?? [:]
            values["folder_id"] = world.malloryIDs[0].uuidString.lowercased()
            row["values"] = values
            edited[item] = Self.json(row)
            // The same folder exists in the target, mallory's: the reference must not reach it.
            _ = try await SessionRevocationTests.sql(
                "INSERT INTO \(Naming.quoted(target)).folder (id, entity, owner_id, name) VALUES ($1::uuid, 'Folder', $2::uuid, 'mallory''s')",
                [world.malloryIDs[0].uuidString, world.mallory.id.uuidString])
            let editedFile = try Self.write(edited)
            defer { try? FileManager.default.removeItem(at: editedFile) }

            let imported = try await ShareCommandTests.run(["user", "import", editedFile.path, "--as", world.alice.name, "--database-url", targetURL])
            #expect(imported.status == 0, "\(imported.error)")
            #expect(imported.output.contains("1 share skipped") && imported.output.contains("1 reference"), "\(imported.output)")
            let shares = try await SessionRevocationTests.sql("SELECT grantee, permission FROM pgmodel.share_list WHERE schema_name = $1", [target])
            #expect(shares == [[carol.name, "readOnly"]])
            let id = try #require(Self.object(edited[item])["id"] as? String)
            let reference = try await SessionRevocationTests.sql("SELECT folder_id::text FROM \(Naming.quoted(target)).item WHERE id = $1::uuid", [id])
            #expect(reference == [[nil]])

            // An unknown target user is refused before anything is written.
            let (empty, emptyURL) = try await Self.target()
            scratch.schemas += [empty]
            let unknown = try await ShareCommandTests.run(["user", "import", file.path, "--as", "nobody_\(ServerTestHarness.uniqueSuffix())", "--database-url", emptyURL])
            #expect(unknown.status != 0 && unknown.error.contains("[not_found]"), "\(unknown.error)")
            #expect(try await Self.count(empty) == 0)
        }
    }
}
