import Foundation
import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// The SECURITY DEFINER functions that row-level security policies call once per statement are plpgsql:
/// PostgreSQL plans a sql function with a SET clause again on every call, which cost a
/// service point fetch more than its own query. Their answers are what they were.
@Suite("Policy functions keep their plans")
struct PolicyFunctionTests {
    static let note: EntityDescription = EntityDescription(name: "PolicyNote", attributes: [
        AttributeDescription(name: "text", type: .string),
    ])
    let schema: SchemaDescription = SchemaDescription(entities: [PolicyFunctionTests.note])
    let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.policy-functions")
        logger.logLevel = .warning
        return logger
    }()

    func language(of function: String, _ engine: PostgresStoreEngine, _ c: EngineConnection) async throws -> String? {
        let rows = try await engine.query(SQLStatement(
            sql: "SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = to_regprocedure($1)",
            binds: [.string(function)]), on: c)
        return try rows.first?.decode(String.self)
    }

    @Test func policyFunctionsArePlpgsqlAndAnswerAsBefore() async throws {
        try await EngineTestStore.with(schema, prefix: "pf", logger: logger) { engine, c, schemaName in
            for function in ["pgmodel.current_user_is_admin()", "pgmodel.read_write_sharers(text)",
                             "pgmodel.is_own_transaction(bigint)", "pgmodel.own_transaction_id()",
                             "\(Naming.quoted(schemaName)).pgmodel_shared_ids(text,boolean,boolean)",
                             "\(Naming.quoted(schemaName)).pgmodel_shared_keys()", "pgmodel.shared_row_keys()",
                             "pgmodel.is_shared_change(bigint,text,uuid,text[])", "pgmodel.is_new_row(regclass,uuid)"] {
                #expect(try await language(of: function, engine, c) == "plpgsql", "\(function)")
            }
            // Outside the service (no user id) nothing is shared, nobody is an admin and there is no own
            // transaction: the same answers the sql functions gave.
            let rows = try await engine.query(SQLStatement(sql: """
                SELECT pgmodel.current_user_is_admin(), cardinality(pgmodel.read_write_sharers($1)),
                       cardinality(\(Naming.quoted(schemaName)).pgmodel_shared_ids('Expedition', false, false)),
                       cardinality(\(Naming.quoted(schemaName)).pgmodel_shared_ids('Expedition', true, true)),
                       pgmodel.own_transaction_id() IS NULL, pgmodel.is_own_transaction(0)
                """, binds: [.string(schemaName)]), on: c)
            let (admin, sharers, shared, sharedWrite, noTransaction, own) = try #require(rows.first).decode((Bool, Int, Int, Int, Bool, Bool).self)
            #expect(!admin)
            #expect(sharers == 0 && shared == 0 && sharedWrite == 0)
            #expect(noTransaction && !own)
        }
    }
}
