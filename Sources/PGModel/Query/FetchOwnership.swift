import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Which models a fetch returns by who owns them: every model the user can see (the default), only
/// their own, or only those other users shared with them.
///
/// ```swift
/// var shared = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)])
/// shared.ownership = .sharedWithMe
/// let tripsOthersShared = try context.fetch(shared)
/// ```
///
/// Through the service the user is the one the container logged in as. On the direct store
/// (`postgres://`), whose own rows have no owner, `.owned` selects those rows and `.sharedWithMe` none.
/// Unsaved models inserted into the context count as owned until they are saved.
public enum FetchOwnership: Hashable, Sendable {
    /// Every model the user can see: their own and those shared with them (an admin sees every row).
    case all
    /// Only the user's own models: the rows they created.
    case owned
    /// Only models other users own and shared with this user, directly or through a `.cascade`
    /// relationship of a shared record (an admin's view is not a share: it is not included).
    case sharedWithMe

    var rowOwnership: RowOwnership? {
        switch self {
        case .all: nil
        case .owned: .owned
        case .sharedWithMe: .sharedWithMe
        }
    }
}
