import Foundation
@_spi(PGModelInternals) @testable import PGModel
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) import PGModelCore
import Testing

/// A container's store reads its TLS files when it is made (the URL options themselves are tested with
/// the store that parses them, in PGModelPostgresTests and PGModelClientTests).
@Suite("TLS configuration: opening a store")
struct TLSConfigurationTests {
    /// The message of the `invalid_configuration` error `body` throws; records an issue otherwise.
    static func refusal(_ body: () throws -> Void) -> String? {
        let error = #expect(throws: PGModelError.self) { try body() }
        return error?.message
    }

    @Test("a store whose tlsCA file is missing fails when it is made, naming the file; pgmodels:// opens a remote store")
    func storeReadsCAFileUpFront() throws {
        let missing = "/nonexistent/pgmodel-\(UUID().uuidString).pem"
        let message = Self.refusal {
            _ = try RemoteModelStore(url: try #require(URL(string: "pgmodels://alice:secret@127.0.0.1?tlsCA=\(missing)")))
        }
        #expect(message == "the tlsCA file '\(missing)' cannot be read")
        let opened = try ModelStores.open(
            url: try #require(URL(string: "pgmodels://alice:secret@127.0.0.1:1?tlsVerify=none")),
            isStoredInMemoryOnly: false, requestTimeout: .seconds(1))
        #expect(opened.store is RemoteModelStore)
    }
}
