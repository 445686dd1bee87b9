/// Joining tables decoded apart (the halves of a large result).
@_spi(PGModelInternals) extension FetchedTable {
    /// This table's rows followed by `other`'s, `other`'s shapes merged into this one's: a shape both
    /// have (same class, same keys) is listed once.
    ///
    /// ```swift
    /// let whole = firstHalf.appending(secondHalf)
    /// ```
    public func appending(_ other: FetchedTable) -> FetchedTable {
        var joined = self
        joined.append(contentsOf: other)
        return joined
    }

    /// Appends `other`'s rows, merging its shapes into this table's (see ``appending(_:)``); the rows
    /// grow in place when this table holds the only reference to them.
    ///
    /// ```swift
    /// var whole = firstHalf
    /// whole.append(contentsOf: secondHalf)
    /// ```
    public mutating func append(contentsOf other: FetchedTable) {
        var shapeIndex: [Int] = []
        shapeIndex.reserveCapacity(other.shapes.count)
        for shape in other.shapes {
            if let known = shapes.firstIndex(of: shape) {
                shapeIndex.append(known)
            } else {
                shapeIndex.append(shapes.count)
                shapes.append(shape)
            }
        }
        rows.reserveCapacity(rows.count + other.rows.count)
        if shapeIndex.enumerated().allSatisfy({ $0.offset == $0.element }) {
            rows.append(contentsOf: other.rows)
        } else {
            for var row in other.rows {
                row.shape = row.shape < shapeIndex.count ? shapeIndex[row.shape] : row.shape
                rows.append(row)
            }
        }
    }
}
