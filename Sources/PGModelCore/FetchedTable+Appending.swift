/// Joining tables decoded apart (the halves of a large result).
extension FetchedTable {
    /// This table's rows followed by `other`'s, `other`'s shapes merged into this one's: a shape both
    /// have (same class, same keys) is listed once.
    ///
    /// ```swift
    /// let whole = firstHalf.appending(secondHalf)
    /// ```
    public func appending(_ other: FetchedTable) -> FetchedTable {
        var joined = self
        var shapeIndex: [Int] = []
        shapeIndex.reserveCapacity(other.shapes.count)
        for shape in other.shapes {
            if let known = joined.shapes.firstIndex(of: shape) {
                shapeIndex.append(known)
            } else {
                shapeIndex.append(joined.shapes.count)
                joined.shapes.append(shape)
            }
        }
        joined.rows.reserveCapacity(rows.count + other.rows.count)
        if shapeIndex.enumerated().allSatisfy({ $0.offset == $0.element }) {
            joined.rows.append(contentsOf: other.rows)
        } else {
            for var row in other.rows {
                row.shape = row.shape < shapeIndex.count ? shapeIndex[row.shape] : row.shape
                joined.rows.append(row)
            }
        }
        return joined
    }
}
