import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import Testing

/// `pgmodel_replicas` and `pgmodel_replica_wait`, parsed without a database, and the routing decision of
/// reads among standbys as the pure state it is.
@Suite("Read replicas: configuration and routing")
struct ReplicaConfigurationTests {
    static let database = "postgres://app:s3cret@10.0.0.1:5433/app?schema=shop"

    @Test("pgmodel_replicas names standbys reached as the primary is; pgmodel_replica_wait bounds the wait")
    func parsed() throws {
        let config = try PostgresStoreConfiguration.parse(Self.database + "&pgmodel_replicas=10.0.0.2:5432,standby-2,[fd00::3]:6543&pgmodel_replica_wait=250&sslmode=require")
        #expect(config.replicas.map(\.host) == ["10.0.0.2", "standby-2", "fd00::3"])
        #expect(config.replicas.map(\.port) == [5432, 5432, 6543])
        for replica in config.replicaConfigurations {
            #expect(replica.username == "app" && replica.password == "s3cret" && replica.database == "app")
            #expect(replica.schemaName == "shop")
            #expect(replica.sslMode == .require)
            #expect(replica.replicas.isEmpty)
        }
        #expect(config.replicaWait == .milliseconds(250))
        let plain = try PostgresStoreConfiguration.parse(Self.database)
        #expect(plain.replicas.isEmpty)
        #expect(plain.replicaWait == PostgresStoreConfiguration.defaultReplicaWait)
    }

    @Test("invalid replica options are invalid_configuration and never show the password",
          arguments: ["pgmodel_replicas=", "pgmodel_replicas=a:b", "pgmodel_replicas=h:0", "pgmodel_replicas=h:70000", "pgmodel_replicas=h1,,h2",
                      "pgmodel_replicas=[::1", "pgmodel_replicas=[::1]x", "pgmodel_replicas=u@h:1", "pgmodel_replica_wait=-1",
                      "pgmodel_replica_wait=60001", "pgmodel_replica_wait=soon", "pgmodel_replica_wait="])
    func refused(_ option: String) {
        do {
            _ = try PostgresStoreConfiguration.parse(Self.database + "&" + option)
            Issue.record("accepted \(option)")
        } catch let error as PGModelError {
            #expect(error.code == .invalidConfiguration)
            #expect(!error.message.contains("s3cret"))
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test("a replica added with its own configuration must name the same database")
    func added() throws {
        var config = try PostgresStoreConfiguration.parse(Self.database)
        try config.addReplica(PostgresStoreConfiguration.parse("postgres://app:other@standby:5432/app?sslmode=require"))
        #expect(config.replicaConfigurations.first?.schemaName == "shop")
        #expect(config.replicaConfigurations.first?.password == "other")
        #expect(throws: PGModelError.self) { try config.addReplica(PostgresStoreConfiguration.parse("postgres://app:pw@standby/elsewhere")) }
        config.addReplica(host: "standby-2", port: 6000)
        #expect(config.replicas.count == 2)
    }

    @Test("routing: a standby known to have replayed the caller's commit serves it; one behind is asked; none up is the primary")
    func routing() throws {
        let now = ContinuousClock.now
        let p10 = try #require(LogSequenceNumber("0/10")), p20 = try #require(LogSequenceNumber("0/20"))
        var routing = ReplicaRouting(replicas: 2)
        // Never asked: any standby for a caller without commits, an ask otherwise.
        #expect(routing.decide(after: nil, now: now) == .replica(0))
        #expect(routing.decide(after: nil, now: now) == .replica(1), "reads spread over the standbys")
        guard case .ask = routing.decide(after: p10, now: now) else { Issue.record("expected an ask"); return }
        routing.recordReplayed(p20, replica: 1)
        #expect(routing.decide(after: p10, now: now) == .replica(1))
        #expect(routing.decide(after: p20, now: now) == .replica(1))
        // Positions only move forward.
        routing.recordReplayed(p10, replica: 1)
        #expect(routing.decide(after: p20, now: now) == .replica(1))
        // Behind everywhere: ask the one furthest along.
        #expect(routing.decide(after: LogSequenceNumber("0/30"), now: now) == .ask(1))
        // Down: left out until its time is up, then tried again.
        routing.markDown(1, until: now + .seconds(2))
        #expect(routing.isDown(1, now: now))
        #expect(routing.decide(after: p20, now: now) == .ask(0))
        routing.markDown(0, until: now + .seconds(2))
        #expect(routing.decide(after: nil, now: now) == .primary)
        #expect(routing.decide(after: p10, now: now) == .primary)
        #expect(routing.decide(after: p10, now: now + .seconds(3)) == .replica(1))
        #expect(!routing.isDown(1, now: now + .seconds(3)))
    }

    @Test("which failures take a standby out of reads, and which send one read to the primary")
    func failures() {
        #expect(ReplicaSet.isStandbyFailure(PGModelError(.connectionFailed, "gone")))
        #expect(ReplicaSet.isStandbyFailure(PGModelError(.internalError, "shutting down", sqlState: "57P01")))
        #expect(ReplicaSet.isStandbyFailure(PGModelError(.internalError, "starting", sqlState: "57P03")))
        #expect(ReplicaSet.isStandbyFailure(PGModelError(.internalError, "read only", sqlState: "25006")))
        #expect(!ReplicaSet.isStandbyFailure(PGModelError(.timeout, "statement timeout", sqlState: "57014")))
        #expect(!ReplicaSet.isStandbyFailure(PGModelError(.unknownAttribute, "no column", sqlState: "42703")))
        #expect(!ReplicaSet.isStandbyFailure(PGModelError(.resultTooLarge, "too large")))
        #expect(ReplicaSet.isRecoveryConflict(PGModelError(.wouldDeadlock, "conflict with recovery", sqlState: "40001")))
        #expect(ReplicaSet.isSchemaLag(PGModelError(.unknownEntity, "no table", sqlState: "42P01")))
    }
}
