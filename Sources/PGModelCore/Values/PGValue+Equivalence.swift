import Foundation

@_spi(PGModelInternals) extension PGValue {
    /// Whether this and `other`, two values of one stored property of type `type`, are the same stored
    /// value: JSON compared as JSON (the database normalizes it), dates to the microsecond, `Float`s as
    /// `Float`s, an integer and a double of one number alike. What a save's conflict check calls "nobody
    /// else changed it", and what a context keeps rather than take a store's copy of its own value.
    ///
    /// ```swift
    /// PGValue.string(#"{"a":1, "b":2}"#).isStoredEquivalent(to: .string(#"{"b":2,"a":1}"#), as: .json)   // true
    /// ```
    public func isStoredEquivalent(to other: PGValue, as type: AttributeType) -> Bool {
        if self == other { return true }
        switch (self, other) {
        case (.string(let x), .string(let y)) where type.isJSONTransported:
            guard let l = Self.jsonObject(x), let r = Self.jsonObject(y) else { return false }
            return l.isEqual(r)
        case (.date(let x), .date(let y)):
            return (x.timeIntervalSinceReferenceDate * 1_000_000).rounded() == (y.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        case (.double(let x), .double(let y)) where type == .float:
            return Float(x) == Float(y)
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)):
            return Double(x) == y
        case (.decimal(let x), .decimal(let y)):
            return x == y
        default:
            return false
        }
    }

    private static func jsonObject(_ text: String) -> NSObject? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) as? NSObject
    }
}
