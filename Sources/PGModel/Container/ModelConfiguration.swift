import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Where a container stores its models.
///
/// - `postgres://user:password@host:port/database?schema=name` — directly in PostgreSQL.
/// - `pgmodel://user:password@host:port` — through the PGModel service, as that user;
///   `pgmodels://…` (or `?tls=true`) over TLS, with `tlsCA=/path/ca.pem` to trust a private CA.
///
/// A `postgres://` URL takes libpq's `sslmode` (`disable`, the default here, `prefer`, `require`,
/// `verify-ca`, `verify-full`) and `sslrootcert`. Either URL may end in `requestTimeout=<seconds>` (`?requestTimeout=5`, or `&requestTimeout=2.5` after
/// other options): the deadline of every store call, 30 seconds unless ``requestTimeout`` or the URL
/// says otherwise. A call past it throws `PGModelError` with code `timeout` and its connection is closed.
///
/// Without a URL, PGModel uses the `DATABASE_URL` environment variable, or the local cluster that
/// `scripts/run.sh` starts. `isStoredInMemoryOnly: true` gives the container a private, temporary
/// PostgreSQL schema that is dropped when the container goes away — the equivalent of SwiftData's
/// in-memory store for tests. Its URL is SwiftData's `/dev/null` unless `DATABASE_URL` names a server:
/// then PGModel starts a throwaway PostgreSQL cluster for the process (PostgreSQL's server programs must
/// be installed; no server needs to run), shared by its in-memory containers and removed at exit.
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
    /// SwiftData's app group container. PostgreSQL is shared by every process that connects, so any
    /// value is accepted and changes nothing.
    public let groupContainer: GroupContainer
    /// SwiftData's CloudKit database: `.automatic` and `.none` are accepted (there is no CloudKit here);
    /// `.private(_:)` makes the container throw `invalid_configuration`, pointing to PGModel's sharing.
    public let cloudKitDatabase: CloudKitDatabase

    /// The deadline of every store call (a fetch, a save, one page of history): past it the call throws
    /// `timeout` and its connection is closed. `nil` takes the URL's `requestTimeout` option, or
    /// ``defaultRequestTimeout``. A save that times out may or may not have committed.
    ///
    /// ```swift
    /// var config = ModelConfiguration(url: url)
    /// config.requestTimeout = .seconds(5)
    /// ```
    public var requestTimeout: Duration?

    /// The deadline when neither ``requestTimeout`` nor the URL gives one: 30 seconds.
    public static let defaultRequestTimeout: Duration = .seconds(30)

    public var id: String { name }

    /// The deadline in force: ``requestTimeout``, else the URL's `requestTimeout` option (seconds),
    /// else ``defaultRequestTimeout``. Throws `invalid_configuration` for an option that is not a
    /// positive number of seconds.
    public func effectiveRequestTimeout() throws -> Duration {
        if let requestTimeout {
            guard requestTimeout > .zero else {
                throw PGModelError(.invalidConfiguration, "requestTimeout must be positive")
            }
            return requestTimeout
        }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        guard let item = items.last(where: { $0.name == "requestTimeout" }) else { return Self.defaultRequestTimeout }
        guard let text = item.value, let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw PGModelError(.invalidConfiguration, "the URL's requestTimeout option must be a number of seconds between 0 and 86400 (got '\(item.value ?? "")')")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The URL used when none is given and `DATABASE_URL` is unset: `scripts/run.sh`'s local cluster.
    public static let defaultDatabaseURL = "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel"

    /// A configuration storing at `url`.
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true,
                cloudKitDatabase: CloudKitDatabase = .automatic) {
        self.name = name ?? "default"
        self.schema = schema
        self.url = url
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = false
        self.groupContainer = .automatic
        self.cloudKitDatabase = cloudKitDatabase
    }

    /// A configuration storing in `DATABASE_URL` (or the local default); with `isStoredInMemoryOnly`,
    /// in a temporary schema there.
    public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
                groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .automatic) {
        self.name = name ?? "default"
        self.schema = schema
        if let base = ProcessInfo.processInfo.environment["DATABASE_URL"], !base.isEmpty {
            self.url = URL(string: base) ?? URL(fileURLWithPath: "/")
        } else if isStoredInMemoryOnly {
            // SwiftData's in-memory URL. With no database named, the store runs on a private PostgreSQL
            // cluster of this process's own (started on first use, removed at exit).
            self.url = URL(fileURLWithPath: "/dev/null")
        } else {
            self.url = URL(string: Self.defaultDatabaseURL) ?? URL(fileURLWithPath: "/")
        }
        self.allowsSave = allowsSave
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.groupContainer = groupContainer
        self.cloudKitDatabase = cloudKitDatabase
    }

    /// The basic configuration, as in SwiftData: `DATABASE_URL` (or the local default), in a temporary
    /// schema when `isStoredInMemoryOnly`.
    ///
    /// ```swift
    /// let config = ModelConfiguration(isStoredInMemoryOnly: true)
    /// ```
    public init(isStoredInMemoryOnly: Bool = false) {
        self.init(nil, schema: nil, isStoredInMemoryOnly: isStoredInMemoryOnly, allowsSave: true)
    }

    /// A configuration for `forTypes`, as in SwiftData.
    ///
    /// ```swift
    /// let config = ModelConfiguration(for: Trip.self, BucketListItem.self, isStoredInMemoryOnly: true)
    /// ```
    public init(for forTypes: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(schema: Schema(forTypes), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// SwiftData's app group setting (`.automatic`, `.none`, `.identifier(_:)`).
    public struct GroupContainer: Hashable, Sendable {
        let identifier: String?
        let isAutomatic: Bool
        /// The app's default group.
        public static let automatic = GroupContainer(identifier: nil, isAutomatic: true)
        /// No group.
        public static let none = GroupContainer(identifier: nil, isAutomatic: false)
        /// A named group.
        public static func identifier(_ groupName: String) -> GroupContainer { GroupContainer(identifier: groupName, isAutomatic: false) }
    }

    /// SwiftData's CloudKit setting (`.automatic`, `.none`, `.private(_:)`).
    public struct CloudKitDatabase: Hashable, Sendable {
        let privateIdentifier: String?
        let isAutomatic: Bool
        /// SwiftData: the app's CloudKit container if it has one. Here: none.
        public static let automatic = CloudKitDatabase(privateIdentifier: nil, isAutomatic: true)
        /// No CloudKit.
        public static let none = CloudKitDatabase(privateIdentifier: nil, isAutomatic: false)
        /// A private CloudKit database: not available in PGModel (the container throws).
        public static func `private`(_ privateDBName: String) -> CloudKitDatabase { CloudKitDatabase(privateIdentifier: privateDBName, isAutomatic: false) }
    }

    /// The CloudKit container's identifier: the name given to `.private(_:)` (which the container
    /// refuses), else nil.
    ///
    /// ```swift
    /// print(config.cloudKitContainerIdentifier ?? "no CloudKit")
    /// ```
    public var cloudKitContainerIdentifier: String? { cloudKitDatabase.privateIdentifier }

    /// The app group's identifier: the name given to `.identifier(_:)`, else nil. It changes nothing
    /// (every process connecting to the store shares it).
    ///
    /// ```swift
    /// print(config.groupAppContainerIdentifier ?? "default group")
    /// ```
    public var groupAppContainerIdentifier: String? { groupContainer.identifier }

    /// Throws for settings PGModel cannot honour.
    func validate() throws {
        if let name = cloudKitDatabase.privateIdentifier {
            throw PGModelError(.invalidConfiguration,
                "cloudKitDatabase: .private(\"\(name)\") is not available: PGModel has no CloudKit. Every client of one PostgreSQL store already shares it; to share records between users, use PGModel's sharing (ModelContext.share, docs/ADMIN.md \"Sharing and row-level security\") and use .none or .automatic here")
        }
    }

    public static func == (l: Self, r: Self) -> Bool {
        l.name == r.name && l.url == r.url && l.allowsSave == r.allowsSave && l.isStoredInMemoryOnly == r.isStoredInMemoryOnly
            && l.schema === r.schema && l.requestTimeout == r.requestTimeout
            && l.groupContainer == r.groupContainer && l.cloudKitDatabase == r.cloudKitDatabase
    }

    public func hash(into h: inout Hasher) {
        h.combine(name)
        h.combine(url)
        h.combine(allowsSave)
        h.combine(isStoredInMemoryOnly)
    }
}
