import Foundation
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// Opens the store a URL names, with the threads and deadline it runs on: the one place that knows
/// which store serves which scheme.
///
/// ```swift
/// let (store, bridge) = try ModelStores.open(url: url, isStoredInMemoryOnly: false, requestTimeout: .seconds(30))
/// try bridge.run(timeout: bridge.schemaTimeout) { try await store.prepare(schema) }
/// ```
package enum ModelStores {
    /// The store for `url` (`postgres://…` directly, `pgmodel://…` or `pgmodels://…` (TLS) through the
    /// service) and the bridge
    /// that runs synchronous calls on the store's event loop within `requestTimeout`. Throws
    /// `invalid_configuration` for another scheme, or an in-memory store on the service.
    package static func open(url: URL, isStoredInMemoryOnly: Bool, requestTimeout: Duration) throws -> (store: any ModelStore, bridge: BlockingBridge) {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let timeout = ConnectionDeadline.timeAmount(requestTimeout)
        let store: any ModelStore
        // SwiftData's in-memory URL, /dev/null (what `isStoredInMemoryOnly` gives when no database is
        // named, and what SwiftData code passes as `url:` for the same): a private cluster serves it.
        let isDevNull = url.isFileURL && url.path == "/dev/null"
        let isStoredInMemoryOnly = isStoredInMemoryOnly || isDevNull
        switch url.scheme {
        case "file" where isDevNull, "postgres", "postgresql":
            let target = isDevNull ? try EphemeralCluster.shared.url() : url
            var configuration = try PostgresStoreConfiguration.parse(target.absoluteString)
            if isStoredInMemoryOnly {
                configuration.schemaName = "pgmodel_mem_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            }
            store = PostgresModelStore(configuration: configuration, eventLoop: eventLoop,
                                       dropsSchemaOnClose: isStoredInMemoryOnly, requestTimeout: timeout)
        case "pgmodel", "pgmodels":
            guard !isStoredInMemoryOnly else {
                throw PGModelError(.invalidConfiguration, "isStoredInMemoryOnly needs a postgres:// store, not the service")
            }
            store = try RemoteModelStore(url: url, eventLoopGroup: eventLoop, requestTimeout: timeout)
        default:
            throw PGModelError(.invalidConfiguration,
                "a ModelConfiguration URL must be postgres://…, pgmodel://… or pgmodels://… (got scheme '\(url.scheme ?? "")')")
        }
        return (store, BlockingBridge(eventLoop: eventLoop, timeout: timeout))
    }

    /// What `PersistentIdentifier.storeIdentifier` says for models of `store`: a direct store's
    /// PostgreSQL schema name, as its history transactions carry; the service's, as its `hello` named
    /// it (nil before the first connection).
    package static func identifier(of store: any ModelStore) -> String? {
        if let direct = store as? PostgresModelStore { return direct.schemaName }
        return (store as? RemoteModelStore)?.storeName
    }
}
