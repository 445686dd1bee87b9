extension Schema {
    /// The indexes of one model as a value, in SwiftData's spelling: each element of ``indices`` is one
    /// index, `.binary` (a B-tree) or `.rtree` (in PostgreSQL a GiST index).
    ///
    /// PGModel learns a model's indexes from the `#Index` macro in its class body, which takes the same
    /// arguments; this type is what those arguments are, for code that builds or inspects index lists.
    ///
    /// ```swift
    /// let index = Schema.Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
    /// index.indices.count   // 2
    /// let same = Schema.Index<Trip>([\.name])   // binary indexes from key-path arrays
    /// ```
    public final class Index<T: PersistentModel>: @unchecked Sendable {
        // @unchecked: the class is immutable, and its key paths name stored properties (no captured state).

        /// The indexes, in declaration order.
        public let indices: [Types<T>]

        /// Indexes of the given kinds.
        ///
        /// ```swift
        /// Schema.Index<Trip>(.binary([\.startDate]), .rtree([\.latitude, \.longitude]))
        /// ```
        public init(_ indices: Types<T>...) {
            self.indices = indices
        }

        /// Binary indexes, one per key-path array (several key paths make a compound index, in that order).
        ///
        /// ```swift
        /// Schema.Index<Trip>([\.startDate], [\.name, \.startDate])
        /// ```
        public init(_ binaryIndices: [PartialKeyPath<T>]...) {
            self.indices = binaryIndices.map { .binary($0) }
        }

        /// The kind of one index and the properties it covers.
        ///
        /// ```swift
        /// let kinds: [Schema.Index<Trip>.Types<Trip>] = [.binary([\.name]), .rtree([\.latitude, \.longitude])]
        /// ```
        public enum Types<P: PersistentModel>: Hashable, @unchecked Sendable {
            // @unchecked: key paths to stored properties are immutable and capture nothing.

            /// A B-tree index (`CREATE INDEX … (a, b)`): equality, ranges and sorting on its leading
            /// properties. Any stored attribute or to-one relationship can be part of one.
            case binary([PartialKeyPath<P>])
            /// An R-tree index, in PostgreSQL a GiST index (`CREATE INDEX … USING gist (a, b)`): ranges on
            /// several properties at once, such as a box of latitudes and longitudes, whichever of them a
            /// predicate restricts. Numeric and `Date` attributes only; it needs PostgreSQL's `btree_gist`
            /// extension, which PGModel creates when a schema first asks for an rtree index.
            case rtree([PartialKeyPath<P>])
        }
    }
}
