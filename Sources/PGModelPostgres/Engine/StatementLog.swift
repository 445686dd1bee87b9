import NIOConcurrencyHelpers

/// The statements sent through an ``EngineConnection`` that carries it, in order: what tests count
/// when they check the round trips a call costs.
///
/// ```swift
/// let log = StatementLog()
/// _ = try await engine.save(request, in: schema, as: .trusted, on: EngineConnection(connection, statementLog: log))
/// #expect(log.count == 3)
/// ```
@_spi(PGModelInternals) public final class StatementLog: Sendable {
    private let box = NIOLockedValueBox([String]())

    public init() {}

    func record(_ sql: String) { box.withLockedValue { $0.append(sql) } }

    /// Every statement's SQL, in the order sent.
    public var statements: [String] { box.withLockedValue { $0 } }
    /// How many statements were sent.
    public var count: Int { statements.count }
}
