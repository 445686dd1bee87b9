/// Which part of a save in parts a `save` line is (`"part"`, `"parts"`): the server holds parts until the
/// last one arrives and runs them together as one save, one transaction (PROTOCOL.md §4, A save in parts).
/// A save whose line would pass the server's request-line limit is sent this way.
///
/// ```swift
/// let request = Request(id: 8, operation: .save(rows), part: SavePart(index: 0, count: 3))
/// // {"id":8,"inserts":[…],"op":"save","part":0,"parts":3,…}
/// ```
@_spi(PGModelInternals) public struct SavePart: Hashable, Sendable {
    /// This part's place, from 0 to ``count`` − 1.
    public var index: Int
    /// How many parts the save has, from 1 to ``maximumCount``.
    public var count: Int

    /// The most parts one save may have.
    public static let maximumCount = 65_536

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Whether this is the save's last part, the one that runs it.
    public var isLast: Bool { index == count - 1 }

    /// Whether `index` and `count` are within the protocol's ranges.
    var isValid: Bool { (1...Self.maximumCount).contains(count) && (0..<count).contains(index) }
}
