import Foundation

/// Which program and process saved: what history records as a transaction's `bundleIdentifier` and
/// `processIdentifier`, as SwiftData records the saving app's bundle and process.
///
/// A direct store (`postgres://`) runs in the saving process, so what it records is true. Through the
/// service (`pgmodel://`) the client says who it is, as it says its `author`: the server cannot check a
/// process id on another machine. So that no service user can pass for another program, a service save's
/// identifiers are shown as recorded only to the user who saved it; every other reader (another user,
/// a direct connection) gets them qualified by the saving user's name, `alice@1234`, so a check like
/// `transaction.processIdentifier == myProcess` never matches someone else's save. Two processes of
/// the same user on different machines may have the same process id: tell them apart with `author`.
///
/// ```swift
/// let mine = String(ProcessInfo.processInfo.processIdentifier)
/// let others = transactions.filter { $0.processIdentifier != mine }
/// ```
@_spi(PGModelInternals) public enum ProcessIdentity {
    /// The most characters a save may give for either identifier.
    public static let maximumLength = 256

    /// This program: `Bundle.main.bundleIdentifier`, or the executable's name where there is no bundle
    /// (as on Linux).
    public static let bundleIdentifier: String = {
        let name = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        return String(name.prefix(maximumLength))
    }()

    /// This process's id, as text.
    public static var processIdentifier: String { String(ProcessInfo.processInfo.processIdentifier) }

    /// `value` as `reader` sees it in a transaction `saver` saved: as recorded when the reader is the
    /// saver or the save came over a direct connection (`saver` nil), else qualified by the saver's name.
    ///
    /// ```swift
    /// ProcessIdentity.shown("1234", savedBy: "bob", readBy: "alice")   // "bob@1234"
    /// ```
    public static func shown(_ value: String?, savedBy saver: String?, readBy reader: String?) -> String? {
        guard let value, let saver, saver != reader else { return value }
        return saver + "@" + value
    }
}
