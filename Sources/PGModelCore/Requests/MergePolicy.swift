import Foundation

/// What a save does when a model it changes or deletes was changed (or deleted) by someone else since
/// the saving context read it: another context, another process, another user of a shared record.
///
/// A save compares, attribute by attribute, the values it replaces with the values the context read
/// (the *ancestor*). Changes to different attributes always merge: each side writes only what it
/// changed. Only the same attribute changed on both sides is a conflict, and the policy decides it.
/// The names are Core Data's `NSMergePolicy` names where they mean the same.
///
/// ```swift
/// context.mergePolicy = .mergeByPropertyStoreTrump   // someone else's newer value wins
/// ```
public struct MergePolicy: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The policy's name on the wire: `error`, `context`, `store` or `overwrite`.
    public let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The policy named `rawValue`, nil for any other name (so decoding one fails).
    public init?(rawValue: String) {
        guard let policy = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = policy
    }

    /// Refuse the save: it throws `save_conflict` (``PGModelError/conflicts`` lists each model and
    /// attribute with this context's value, the store's and the ancestor) and writes nothing. The
    /// default, as Core Data's `NSErrorMergePolicy`: nothing is lost without the app knowing.
    ///
    /// ```swift
    /// catch let error as PGModelError where error.code == .saveConflict { print(error.conflicts) }
    /// ```
    public static let error = MergePolicy("error")
    /// This context's value wins for each conflicting attribute; someone else's changes to other
    /// attributes stay (`NSMergeByPropertyObjectTrumpMergePolicy`).
    ///
    /// ```swift
    /// context.mergePolicy = .mergeByPropertyObjectTrump
    /// ```
    public static let mergeByPropertyObjectTrump = MergePolicy("context")
    /// The store's value wins for each conflicting attribute: this context's change of it is dropped and
    /// the model shows the stored value after the save (`NSMergeByPropertyStoreTrumpMergePolicy`).
    ///
    /// ```swift
    /// context.mergePolicy = .mergeByPropertyStoreTrump
    /// ```
    public static let mergeByPropertyStoreTrump = MergePolicy("store")
    /// No comparison: this context's changed attributes are written as they are, as SwiftData on one
    /// device does (`NSOverwriteMergePolicy`). Attributes with a ``MergeRule`` still merge by it.
    ///
    /// ```swift
    /// context.mergePolicy = .overwrite
    /// ```
    public static let overwrite = MergePolicy("overwrite")

    /// Every policy, for validation and docs.
    public static let all: [MergePolicy] = [.error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite]

    public var description: String { rawValue }
}

/// How one attribute merges when two saves change it concurrently, whatever the context's
/// ``MergePolicy``: declared on the model with `@Attribute(.merge(.sum))`.
///
/// ```swift
/// @Model final class Post {
///     @Attribute(.merge(.sum)) var likes: Int = 0          // two +1s make +2
///     @Attribute(.merge(.union)) var tags: [String] = []    // both sides' additions stay
///     @Attribute(.merge(.lastWriter)) var lastSeen: Date?   // never a conflict
/// }
/// ```
public struct MergeRule: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The rule's name on the wire: `sum`, `union` or `last_writer`.
    public let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The rule named `rawValue`, nil for any other name (so decoding one fails).
    public init?(rawValue: String) {
        guard let rule = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = rule
    }

    /// A counter: the stored value becomes the store's value plus this context's increment (its value
    /// minus the ancestor). For integer, floating-point and decimal attributes.
    public static let sum = MergeRule("sum")
    /// A set or array: the store's elements, plus those this context added, minus those it removed.
    /// For array attributes (and `Codable` arrays).
    public static let union = MergeRule("union")
    /// This context's value, without comparison: never a conflict.
    public static let lastWriter = MergeRule("last_writer")

    /// Every rule, for validation and docs.
    public static let all: [MergeRule] = [.sum, .union, .lastWriter]

    public var description: String { rawValue }
}
