import Foundation
import NIOCore
import NIOEmbedded
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelSQL
@_spi(PGModelInternals) import PGModelWire

/// Everything the service does with a client's bytes before the database, run on one input: framing
/// (``LineFramer`` and the NIO ``LineFrameDecoder``, fed in chunks), ``Request/decode(line:)``, the
/// ``SessionStateMachine``, validation and SQL rendering of every op against ``FuzzSchema``, and the
/// encoding of every response. The libFuzzer harness in `Fuzz/` and the corpus replay test share it
/// (this file is linked into `Fuzz/Sources/PGModelFuzz`).
///
/// A trap anywhere below is a finding; so is a broken invariant, which ``run(_:)`` returns as text.
///
/// ```swift
/// let violations = FuzzDriver.run(Array(#"{"id":1,"op":"ping"}"#.utf8))   // []
/// ```
enum FuzzDriver {
    /// What one input did, for the replay test's assertions.
    struct Outcome {
        var lines = 0
        var errors: [String] = []
        var rendered = 0
        var violations: [String] = []
    }

    /// The control byte that starts every input: reads of `chunk` (1 to 16) bytes, logged in (as an admin)
    /// or not, and a line limit of 256 bytes (`shortLines`) or the server's default (1 MiB).
    static func control(chunk: Int = 16, loggedIn: Bool = true, admin: Bool = false, shortLines: Bool = false) -> UInt8 {
        UInt8(max(1, min(16, chunk)) - 1) | (loggedIn ? 0 : 0x80) | (admin ? 0x20 : 0) | (shortLines ? 0x40 : 0)
    }

    /// The first byte steers the harness (chunk size, line limit, logged in or not); the rest is the stream.
    static func run(_ input: [UInt8]) -> [String] { runDetailed(input).violations }

    static func runDetailed(_ input: [UInt8]) -> Outcome {
        var outcome = Outcome()
        let control = input.first ?? 0
        let stream = Array(input.dropFirst())
        let chunk = Int(control & 0x0F) + 1
        let maxLineBytes = control & 0x40 != 0 ? 256 : WireProtocol.defaultMaxLineBytes
        let frames = frame(stream, chunk: chunk, maxLineBytes: maxLineBytes, &outcome)
        var session = SessionStateMachine(maxFailedAuthentications: 3)
        var subscriptions = SubscriptionStateMachine(maxSubscriptions: 4)
        if control & 0x80 == 0 {
            _ = session.receive(Request(id: 0, operation: .hello(HelloPayload(user: "fuzz", password: "x"))))
            _ = session.authenticationSucceeded(id: 0, user: SessionUser(id: UUID(), name: "fuzz", isAdmin: control & 0x20 != 0))
        }
        for frame in frames {
            let action: SessionStateMachine.Action
            switch frame {
            case .lineTooLong(let limit):
                action = session.receiveOversizedLine(limit: limit)
            case .line(let line):
                outcome.lines += 1
                action = session.receive(Request.decode(line: line))
            }
            perform(action, &session, &outcome)
            if case .execute(let request, _) = action { subscribe(request, &subscriptions, &outcome) }
        }
        return outcome
    }

    /// Frames `bytes` twice, with the pure framer and through a NIO pipeline, in `chunk`-byte reads; both
    /// must agree.
    private static func frame(_ bytes: [UInt8], chunk: Int, maxLineBytes: Int, _ outcome: inout Outcome) -> [LineFramer.Frame] {
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        var frames: [LineFramer.Frame] = []
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxLineBytes)))
        var piped: [LineFramer.Frame] = []
        var start = 0
        while start < bytes.count {
            let piece = bytes[start..<min(bytes.count, start + chunk)]
            start += chunk
            framer.append(contentsOf: piece)
            while let frame = framer.next() { frames.append(frame) }
            do {
                try channel.writeInbound(ByteBuffer(bytes: piece))
                while let frame = try channel.readInbound(as: LineFramer.Frame.self) { piped.append(frame) }
            } catch {
                outcome.violations.append("the NIO line decoder threw \(type(of: error))")
            }
        }
        if let last = framer.finish() { frames.append(last) }
        do {
            _ = try channel.finish()
            while let frame = try channel.readInbound(as: LineFramer.Frame.self) { piped.append(frame) }
        } catch {
            outcome.violations.append("closing the NIO line decoder threw \(type(of: error))")
        }
        if frames != piped {
            outcome.violations.append("LineFramer gave \(frames.count) frames, LineFrameDecoder \(piped.count)")
        }
        for case .line(let line) in frames where line.readableBytes > maxLineBytes || line.readableBytesView.contains(0x0A) {
            outcome.violations.append("a frame of \(line.readableBytes) bytes is longer than the limit or holds a newline")
        }
        return frames
    }

    private static func perform(_ action: SessionStateMachine.Action, _ session: inout SessionStateMachine, _ outcome: inout Outcome) {
        switch action {
        case .respond(let response), .respondAndClose(let response):
            encode(response, &outcome)
        case .ignore:
            break
        case .authenticate(let id, let hello):
            // Odd-length user names log in, the others fail: both paths of the state machine get exercised.
            let next = hello.user.utf8.count % 2 == 1
                ? session.authenticationSucceeded(id: id, user: SessionUser(id: UUID(), name: hello.user, isAdmin: false))
                : session.authenticationFailed(id: id, error: WireError(.authenticationFailed, "wrong user name or password"))
            perform(next, &session, &outcome)
        case .execute(let request, _):
            let result: Result<ResponseResult, WireError>
            do {
                result = .success(try execute(request.operation, &outcome))
            } catch let error as PGModelError {
                result = .failure(WireError(error))
            } catch let error as WireError {
                result = .failure(error)
            } catch {
                outcome.violations.append("rendering \(request.operation.name.rawValue) threw \(type(of: error)), not a coded error")
                result = .failure(WireError(.internalError, "untyped"))
            }
            encode(Response(id: request.id, result: result), &outcome)
        }
    }

    /// What the session's subscriptions do with `subscribe` and `unsubscribe`, and a save's change signal after each.
    private static func subscribe(_ request: Request, _ subscriptions: inout SubscriptionStateMachine, _ outcome: inout Outcome) {
        var changed: [String] = []
        switch request.operation {
        case .subscribe(let entities):
            if case .failure(let error) = subscriptions.subscribe(id: request.id, entities: entities) {
                outcome.errors.append(error.code.rawValue)
            } else {
                subscriptions.activate(id: request.id)
            }
        case .unsubscribe(let id):
            if case .failure(let error) = subscriptions.unsubscribe(id: id) { outcome.errors.append(error.code.rawValue) }
        case .save(let save):
            changed = (save.inserts + save.updates).map(\.entity) + save.deletes.map(\.entity)
        default:
            return
        }
        subscriptions.receive(ChangeSignal(changed.isEmpty ? .reconnected : .committed, entities: changed))
        for event in subscriptions.takeEvents() {
            guard let line = try? WireJSON.encodeLine(event), !line.dropLast().contains(0x0A) else {
                outcome.violations.append("an event did not encode as one line")
                continue
            }
        }
    }

    /// One response as the server writes it, read back as the client does: one line, no raw newline inside.
    private static func encode(_ response: Response, _ outcome: inout Outcome) {
        if case .failure(let error) = response.result {
            outcome.errors.append(error.code.rawValue)
        }
        do {
            let line = try response.encodedLine()
            guard line.last == 0x0A, !line.dropLast().contains(0x0A) else {
                outcome.violations.append("a response line has a raw newline inside")
                return
            }
            _ = try? ServerMessage.decode(line: Data(line.dropLast()))
        } catch {
            // A result JSON cannot carry (a non-finite double) is the server's type_mismatch, not a trap.
            outcome.errors.append("unencodable")
        }
    }

    /// What the dispatcher and the store would render for `operation`, without a database.
    private static func execute(_ operation: Request.Operation, _ outcome: inout Outcome) throws -> ResponseResult {
        let renderer = try FuzzSchema.renderer()
        let schema = renderer.schema
        func count(_ statement: SQLStatement) { outcome.rendered += 1 }
        switch operation {
        case .fetch(let request), .fetchTable(let request), .count(let request), .ids(let request):
            try request.validate(against: schema)
            _ = try renderer.selectLayout(request)
            count(try renderer.select(request))
            count(try renderer.count(request))
            count(try renderer.selectIdentifiers(request))
            if let predicate = request.predicate { count(try renderer.renderPredicate(predicate, entity: request.entity)) }
            return .count(0)
        case .save(let request):
            try request.validate(against: schema)
            for row in request.inserts {
                count(try renderer.insert(row, owner: nil))
                count(try renderer.insert(row, owner: UUID(), upserting: false))
                _ = try renderer.upsertUpdate(row, owner: nil)
            }
            for row in request.updates { count(try renderer.update(row)) }
            for reference in request.deletes {
                count(try renderer.delete(reference))
                count(try renderer.exists(reference))
                count(try renderer.lockRows(of: reference.entity, ids: [reference.id]))
                count(try renderer.deleteRows(of: reference.entity, ids: [reference.id]))
                for relationship in try renderer.entity(reference.entity).relationships {
                    count(try renderer.relatedRows(relationship.name, of: reference.entity, ids: [reference.id]))
                }
                _ = try renderer.referencingRows(to: reference.entity, ids: [reference.id])
            }
            for change in request.links {
                count(try renderer.link(change))
                count(try renderer.linkExists(change))
            }
            for request in request.batchDeletes { count(try renderer.selectForDelete(request)) }
            let shares = ShareSQL(schemaName: "app")
            for change in request.shares {
                count(shares.userID(named: change.user))
                if let permission = change.permission {
                    count(shares.grant(record: change.record, root: change.record.entity, concrete: change.record.entity, owner: nil, grantee: UUID(),
                                       permission: permission, grantedBy: change.user))
                } else {
                    count(shares.revoke(record: change.record, root: change.record.entity, grantee: UUID()))
                }
            }
            // The values come back as rows: the response encoder sees every value a client can send.
            return .rows(request.inserts + request.updates)
        case .history(let request), .deleteHistory(let request):
            try request.validate()
            let sql = HistorySQL(schemaName: "app")
            count(sql.selectTransactions(request))
            count(sql.deleteTransactions(request.filter))
            count(sql.selectChanges(transactionIDs: [1, 2], entities: request.changedEntities))
            return .count(0)
        case .register(let registered):
            try registered.validate()
            _ = schema.firstDifference(registering: registered)
            outcome.rendered += try SQLRenderer(schema: registered, schemaName: "app").createStatements().count
            return .registered(entities: registered.entities.map(\.name))
        case .migrate(let target, let plan):
            try plan.validate()
            for version in plan.schemas { try version.validate() }
            for (old, new) in zip(plan.schemas, plan.schemas.dropFirst()) {
                outcome.rendered += try SQLRenderer(schema: new, schemaName: "app").migrationStatements(from: old).count
            }
            _ = try plan.route(registered: schema, recorded: nil, target: target.version)
            return .registered(entities: target.entities.map(\.name))
        case .share(let change), .unshare(let change):
            try SaveRequest(shares: [change]).validate(against: schema)
            return .acknowledged
        case .shares(let record):
            _ = try schema.requireEntity(record.entity)
            count(ShareSQL(schemaName: "app").shares(of: record, root: record.entity))
            return .shares(RecordSharing(owner: nil, shares: []))
        case .subscribe(let entities):
            return .subscribed(RequestID.int(Int64(entities?.count ?? 0)))
        case .unsubscribe, .hello, .ping, .bye:
            return .acknowledged
        }
    }
}
