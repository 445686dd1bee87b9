import Foundation

extension SaveRequest {
    /// About how many bytes this save's decoded lists take in memory: the rows' arrays and values, their
    /// strings' and data's heap storage, and each distinct ``RowKeys`` once. Batch deletes count only their
    /// stride; a holder that must bound them counts them some other way (the server counts their line).
    ///
    /// The server bounds the saves in parts it holds by this (and by their lines' length), since crafted
    /// rows can take several times their line's bytes once decoded.
    ///
    /// ```swift
    /// guard budget.reserve(max(line.readableBytes, part.approximateMemoryBytes)) else { refuse() }
    /// ```
    package var approximateMemoryBytes: Int {
        var seen = Set<ObjectIdentifier>()
        var total = 6 * MemoryMeasure.arrayHeader
        for rows in [inserts, updates] {
            total += rows.count * MemoryLayout<RowValues>.stride
            for row in rows { total += row.approximateHeapBytes(countingKeys: &seen) }
        }
        total += deletes.count * MemoryLayout<RowReference>.stride
        for reference in deletes { total += reference.entity.approximateHeapBytes }
        total += links.count * MemoryLayout<LinkChange>.stride
        for link in links { total += link.entity.approximateHeapBytes + link.relationship.approximateHeapBytes }
        total += batchDeletes.count * MemoryLayout<FetchRequest>.stride
        total += shares.count * MemoryLayout<ShareChange>.stride
        for share in shares { total += share.record.entity.approximateHeapBytes + share.user.approximateHeapBytes }
        return total + (author?.approximateHeapBytes ?? 0) + (bundleIdentifier?.approximateHeapBytes ?? 0)
            + (processIdentifier?.approximateHeapBytes ?? 0)
    }
}

/// Rough sizes of the standard library's storage, for bounding memory (not for exact accounting): a heap
/// object's header and allocator rounding, and a dictionary's spare capacity.
package enum MemoryMeasure {
    /// An array's heap header (object header, count and capacity) plus the allocator's rounding.
    package static let arrayHeader = 48
    /// A native dictionary of `count` entries of `entryBytes` each: its header, its buckets at a load
    /// factor of 3/4, and one metadata bit per bucket.
    package static func dictionary(count: Int, entryBytes: Int) -> Int {
        guard count > 0 else { return 0 }
        return 64 + (count * 4 / 3 + 1) * (entryBytes + 1)
    }
}

extension String {
    /// Heap bytes behind this string: none for a small string (up to 15 UTF-8 bytes, stored inline).
    package var approximateHeapBytes: Int {
        let count = utf8.count
        return count <= 15 ? 0 : 32 + count
    }
}

extension PGValue {
    /// Heap bytes behind this value (a long string's or a large data's storage).
    package var approximateHeapBytes: Int {
        switch self {
        case .string(let string): return string.approximateHeapBytes
        case .data(let data): return data.count <= 14 ? 0 : 32 + data.count
        default: return 0
        }
    }
}

extension RowKeys {
    /// Heap bytes behind these keys: the object, its names and its positions.
    package var approximateHeapBytes: Int {
        var total = 16 + MemoryMeasure.arrayHeader + names.count * MemoryLayout<String>.stride
        total += MemoryMeasure.dictionary(count: positions.count, entryBytes: MemoryLayout<String>.stride + MemoryLayout<Int>.stride)
        for name in names { total += name.approximateHeapBytes }
        return total
    }
}
