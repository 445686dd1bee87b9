@_spi(PGModelInternals) import PGModelCore

/// The value names of one fetched shape, shared by every row (and model) built from it: the names once,
/// and their positions for lookups by name.
final class StoredKeys: @unchecked Sendable {
    // @unchecked: immutable after init.
    let names: [String]
    let positions: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        positions.reserveCapacity(names.count)
        for (i, name) in names.enumerated() where positions[name] == nil { positions[name] = i }
        self.positions = positions
    }

    static let empty = StoredKeys([])
}

/// A model's stored values by property name, kept positionally: the values of the row it was built from
/// in an array, their names in a ``StoredKeys`` shared by the whole fetch, and only values set under
/// other names (after a save or a fault load) in a dictionary. Building a fetched model therefore
/// allocates one array, not a dictionary of hashed keys.
///
/// ```swift
/// var stored: StoredValues = ["name": .string("Paris")]
/// stored["name"]   // .string("Paris")
/// ```
struct StoredValues: ExpressibleByDictionaryLiteral {
    private var keys: StoredKeys
    private var values: [PGValue]
    /// Values of names outside ``keys``.
    private var extra: [String: PGValue]

    init() {
        keys = .empty
        values = []
        extra = [:]
    }

    /// The values of a fetched row, `values[i]` named `keys.names[i]` (the caller checked the counts).
    init(keys: StoredKeys, values: [PGValue]) {
        self.keys = keys
        self.values = values
        self.extra = [:]
    }

    init(_ dictionary: [String: PGValue]) {
        keys = .empty
        values = []
        extra = dictionary
    }

    init(dictionaryLiteral elements: (String, PGValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, new in new }))
    }

    subscript(key: String) -> PGValue? {
        get {
            if let i = keys.positions[key] { return values[i] }
            return extra.isEmpty ? nil : extra[key]
        }
        set {
            if let i = keys.positions[key] {
                guard let newValue else {
                    // A positional value cannot be absent: fall back to names for everything.
                    var all = dictionary
                    all[key] = nil
                    self = StoredValues(all)
                    return
                }
                values[i] = newValue
            } else {
                extra[key] = newValue
            }
        }
    }

    /// The value of `key` for a model's `init(backingData:)`, which reads its properties in declaration
    /// order, as a shape lists them: `cursor` guesses the position, so most reads compare one name
    /// instead of hashing it.
    ///
    /// Mutating though it changes nothing: called on a backing data's stored values, it then reads them
    /// in place, where a non-mutating call copied the whole struct first (three retains and three
    /// releases for every property of every fetched row).
    mutating func value(forKey key: String, cursor: inout Int) -> PGValue? {
        let names = keys.names
        if cursor < names.count, names[cursor] == key {
            defer { cursor += 1 }
            return values[cursor]
        }
        if let i = keys.positions[key] {
            cursor = i + 1
            return values[i]
        }
        return extra.isEmpty ? nil : extra[key]
    }

    /// Every name and value.
    var dictionary: [String: PGValue] {
        var all = extra
        for (name, value) in zip(keys.names, values) { all[name] = value }
        return all
    }

    /// `other`'s values replace this one's of the same name (a refresh with a newer, maybe partial, row).
    mutating func merge(_ other: StoredValues) {
        if other.keys === keys, extra.isEmpty, other.extra.isEmpty {
            values = other.values
            return
        }
        for (name, value) in zip(other.keys.names, other.values) { self[name] = value }
        for (name, value) in other.extra { self[name] = value }
    }
}
