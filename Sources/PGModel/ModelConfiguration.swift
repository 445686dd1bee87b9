import Foundation
import PGModelCore

/// Where a container stores its models.
///
/// - `postgres://user:password@host:port/database?schema=name` — directly in PostgreSQL.
/// - `pgmodel://user:password@host:port` — through the PGModel service, as that user.
///
/// Without a URL, PGModel uses the `DATABASE_URL` environment variable, or the local cluster that
/// `scripts/run.sh` starts. `isStoredInMemoryOnly: true` gives the container a private, temporary
/// PostgreSQL schema that is dropped when the container goes away — the equivalent of SwiftData's
/// in-memory store for tests.
///
/// ```swift
/// let config = ModelConfiguration(url: URL(string: "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel")!)
/// let container = try ModelContainer(for: Trip.self, configurations: config)
/// ```
public struct ModelConfiguration: Identifiable, Hashable, Sendable {
    /// The configuration's name.
    public let name: String
    /// The schema, if given here rather than to the container.
    public let schema: Schema?
    /// The store's URL.
    public let url: URL
    /// Whether `save()` may write; `false` makes every save throw `saveNotAllowed`.
    public let allowsSave: Bool
    /// Whether the store is a temporary schema dropped with the container.
    public let isStoredInMemoryOnly: Bool

    public var id: String { name }

    /// The URL used when none is given and `DATABASE_URL` is unset: `scripts/run.sh`'s local cluster.
    public static let defaultDatabaseURL = "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel"

    /// A configuration storing at `url`.
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true) {
        self.name = name ?? "default"
        self.schema = schema
        self.url = url
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = false
    }

    /// A configuration storing in `DATABASE_URL` (or the local default); with `isStoredInMemoryOnly`,
    /// in a temporary schema there.
    public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true) {
        self.name = name ?? "default"
        self.schema = schema
        let base = ProcessInfo.processInfo.environment["DATABASE_URL"] ?? Self.defaultDatabaseURL
        self.url = URL(string: base) ?? URL(fileURLWithPath: "/")
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
    }

    public static func == (l: Self, r: Self) -> Bool {
        l.name == r.name && l.url == r.url && l.allowsSave == r.allowsSave && l.isStoredInMemoryOnly == r.isStoredInMemoryOnly
            && l.schema === r.schema
    }

    public func hash(into h: inout Hasher) {
        h.combine(name)
        h.combine(url)
        h.combine(allowsSave)
        h.combine(isStoredInMemoryOnly)
    }
}
