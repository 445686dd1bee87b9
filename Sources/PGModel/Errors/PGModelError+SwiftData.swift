/// SwiftData's error type. PGModel throws one error type, ``PGModelError``; this name lets code written
/// against SwiftData's `SwiftDataError` compile and catch what PGModel throws.
///
/// Apple's constants (`.unsupportedPredicate`, `.loadIssueModelContainer`, …) match by *kind*: each
/// matches the PGModel codes that mean the same thing, in a `catch` clause or a `switch` case.
///
/// ```swift
/// do {
///     _ = try context.fetch(FetchDescriptor<Trip>(predicate: predicate))
/// } catch SwiftDataError.unsupportedPredicate {
///     print("rewrite the predicate")
/// } catch let error as SwiftDataError {
///     switch error {
///     case .loadIssueModelContainer: print("the store could not be opened: \(error.message)")
///     default: print(error.code)
///     }
/// }
/// ```
public typealias SwiftDataError = PGModelError

extension PGModelError.Code {
    // Kinds SwiftData names that no single PGModel code stands for: a constant with one of these codes
    // matches the PGModel codes listed in `PGModelError.swiftDataKinds`.
    static let loadIssueModelContainer = Self(rawValue: "load_issue_model_container")
    static let modelValidationFailure = Self(rawValue: "model_validation_failure")
    static let unsupportedKeyPath = Self(rawValue: "unsupported_key_path")
    static let includePendingChangesWithBatchSize = Self(rawValue: "include_pending_changes_with_batch_size")
    static let sortingPendingChangesWithIdentifiers = Self(rawValue: "sorting_pending_changes_with_identifiers")
    static let configurationFileNameContainsInvalidCharacters =
        Self(rawValue: "configuration_file_name_contains_invalid_characters")
    static let configurationFileNameTooLong = Self(rawValue: "configuration_file_name_too_long")
    static let configurationSchemaNotFoundInContainerSchema =
        Self(rawValue: "configuration_schema_not_found_in_container_schema")
    static let duplicateConfiguration = Self(rawValue: "duplicate_configuration")
    static let missingModelContext = Self(rawValue: "missing_model_context")
}

extension PGModelError {
    /// The PGModel codes each of SwiftData's kinds stands for, beside the kind's own code.
    static let swiftDataKinds: [Code: Set<Code>] = [
        .loadIssueModelContainer: [
            .connectionFailed, .tlsFailed, .authenticationFailed, .rateLimited, .invalidConfiguration,
            .invalidSchema, .migrationFailed, .schemaVersionMismatch, .unknownSchemaVersion,
        ],
        .modelValidationFailure: [
            .typeMismatch, .uniqueViolation, .constraintViolation, .relationshipCount, .deleteDenied,
        ],
        .unsupportedKeyPath: [.unknownAttribute],
    ]

    private init(swiftDataKind code: Code, _ message: String) {
        self.init(code, message)
    }

    // MARK: Fetch errors

    /// A fetch that asks for pending changes and a batch size at once. PGModel's
    /// `fetch(_:batchSize:)` reads saved rows only, so it never throws this.
    ///
    /// ```swift
    /// catch SwiftDataError.includePendingChangesWithBatchSize { … }
    /// ```
    public static let includePendingChangesWithBatchSize = PGModelError(
        swiftDataKind: .includePendingChangesWithBatchSize, "a batched fetch cannot include pending changes")
    /// Sorting pending changes in an identifier fetch. PGModel's `fetchIdentifiers` sorts in
    /// PostgreSQL and never throws this.
    ///
    /// ```swift
    /// catch SwiftDataError.sortingPendingChangesWithIdentifiers { … }
    /// ```
    public static let sortingPendingChangesWithIdentifiers = PGModelError(
        swiftDataKind: .sortingPendingChangesWithIdentifiers, "pending changes cannot be sorted by identifier")
    /// A key path the store cannot use: matches `unknown_attribute`.
    ///
    /// ```swift
    /// catch SwiftDataError.unsupportedKeyPath { … }
    /// ```
    public static let unsupportedKeyPath = PGModelError(
        swiftDataKind: .unsupportedKeyPath, "a key path the store cannot use")
    /// A `#Predicate` the store cannot translate: matches `unsupported_predicate`.
    ///
    /// ```swift
    /// catch SwiftDataError.unsupportedPredicate { … }
    /// ```
    public static let unsupportedPredicate = PGModelError(
        .unsupportedPredicate, "a predicate the store cannot translate")
    /// A sort descriptor the store cannot translate: matches `unsupported_sort`.
    ///
    /// ```swift
    /// catch SwiftDataError.unsupportedSortDescriptor { … }
    /// ```
    public static let unsupportedSortDescriptor = PGModelError(
        .unsupportedSort, "a sort descriptor the store cannot translate")

    // MARK: History errors

    /// A history token older than the oldest history kept: matches `history_token_expired`.
    ///
    /// ```swift
    /// catch SwiftDataError.historyTokenExpired { token = nil }
    /// ```
    public static let historyTokenExpired = PGModelError(
        .historyTokenExpired, "the history token is older than the history kept")
    /// A history fetch the store cannot run: matches `unsupported_history_query`.
    ///
    /// ```swift
    /// catch SwiftDataError.invalidTransactionFetchRequest { … }
    /// ```
    public static let invalidTransactionFetchRequest = PGModelError(
        .unsupportedHistoryQuery, "a history fetch the store cannot run")

    // MARK: Container errors

    /// The container could not open its store: matches `connection_failed`, `tls_failed`,
    /// `authentication_failed`, `rate_limited`, `invalid_configuration`, `invalid_schema`,
    /// `migration_failed`, `schema_version_mismatch` and `unknown_schema_version` (a call after the
    /// container opened can also fail with the first of these, when the connection breaks).
    ///
    /// ```swift
    /// do { container = try ModelContainer(for: Trip.self) }
    /// catch SwiftDataError.loadIssueModelContainer { … }
    /// ```
    public static let loadIssueModelContainer = PGModelError(
        swiftDataKind: .loadIssueModelContainer, "the model container could not load its store")
    /// A store file name with characters a file system refuses. PGModel's stores are PostgreSQL
    /// schemas, named by the URL, so it never throws this.
    ///
    /// ```swift
    /// catch SwiftDataError.configurationFileNameContainsInvalidCharacters { … }
    /// ```
    public static let configurationFileNameContainsInvalidCharacters = PGModelError(
        swiftDataKind: .configurationFileNameContainsInvalidCharacters, "the store's file name has invalid characters")
    /// A store file name longer than a file system allows; never thrown by PGModel (see above).
    ///
    /// ```swift
    /// catch SwiftDataError.configurationFileNameTooLong { … }
    /// ```
    public static let configurationFileNameTooLong = PGModelError(
        swiftDataKind: .configurationFileNameTooLong, "the store's file name is too long")
    /// A configuration whose schema names models the container's schema lacks.
    ///
    /// ```swift
    /// catch SwiftDataError.configurationSchemaNotFoundInContainerSchema { … }
    /// ```
    public static let configurationSchemaNotFoundInContainerSchema = PGModelError(
        swiftDataKind: .configurationSchemaNotFoundInContainerSchema,
        "the configuration's schema is not part of the container's schema")
    /// Two configurations of one container naming the same store.
    ///
    /// ```swift
    /// catch SwiftDataError.duplicateConfiguration { … }
    /// ```
    public static let duplicateConfiguration = PGModelError(
        swiftDataKind: .duplicateConfiguration, "two configurations name the same store")

    // MARK: Migration errors

    /// A store newer than the app's schema: matches `schema_version_mismatch`.
    ///
    /// ```swift
    /// catch SwiftDataError.backwardMigration { … }
    /// ```
    public static let backwardMigration = PGModelError(
        .schemaVersionMismatch, "the store's schema is newer than the app's")
    /// A store whose schema version no versioned schema of the plan describes: matches
    /// `unknown_schema_version`.
    ///
    /// ```swift
    /// catch SwiftDataError.unknownSchema { … }
    /// ```
    public static let unknownSchema = PGModelError(
        .unknownSchemaVersion, "the store's schema version is not in the migration plan")
    /// The same as ``unknownSchema`` under the name newer SDKs use.
    ///
    /// ```swift
    /// catch SwiftDataError.unknownDataStoreSchema { … }
    /// ```
    public static let unknownDataStoreSchema = PGModelError(
        .unknownSchemaVersion, "the store's schema version is not in the migration plan")

    // MARK: Model errors

    /// A save refused because a model breaks a rule of the schema: matches `type_mismatch`,
    /// `unique_violation`, `constraint_violation`, `relationship_count` and `delete_denied`.
    ///
    /// ```swift
    /// catch SwiftDataError.modelValidationFailure { … }
    /// ```
    public static let modelValidationFailure = PGModelError(
        swiftDataKind: .modelValidationFailure, "a model breaks a rule of the schema")
    /// A model used where it needs a context and has none.
    ///
    /// ```swift
    /// catch SwiftDataError.missingModelContext { … }
    /// ```
    public static let missingModelContext = PGModelError(
        swiftDataKind: .missingModelContext, "the model has no context")

    // MARK: Matching

    /// Whether `error` is of the kind `pattern` names: its code is the pattern's, or one of the codes
    /// the pattern's SwiftData kind stands for. Messages and details are not compared.
    ///
    /// ```swift
    /// switch error { case .unsupportedPredicate: …; default: … }
    /// ```
    public static func ~= (pattern: PGModelError, error: PGModelError) -> Bool {
        error.code == pattern.code || swiftDataKinds[pattern.code]?.contains(error.code) == true
    }

    /// Whether a thrown error is a ``PGModelError`` of the kind `pattern` names, for `catch` clauses.
    ///
    /// ```swift
    /// catch SwiftDataError.historyTokenExpired { … }
    /// ```
    public static func ~= (pattern: PGModelError, error: any Error) -> Bool {
        guard let error = error as? PGModelError else { return false }
        return pattern ~= error
    }
}
