import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The lines a client sends for one save: one line when it fits the server's request-line limit, else the
/// save in parts (PROTOCOL.md §4, A save in parts), each part a contiguous run of the save's changes (its
/// inserts, updates, deletes, links, batch deletes and shares, in that order) whose line fits the limit.
///
/// ```swift
/// let lines = try SaveParts.lines(for: save, timeout: .seconds(30), maxLineBytes: 1 << 20,
///                                 maxSaveBytes: 64 << 20, makeID: store.makeRequestID)
/// ```
package enum SaveParts {
    /// One request line, `"\n"` included, with its id.
    package struct Line: Sendable {
        package var id: RequestID
        package var bytes: Data
    }

    /// The lines for `save`, in the order they must be sent. With `maxSaveBytes` nil (a server that takes no
    /// saves in parts) the save is one line whatever its length. Throws `line_too_long` when one change alone
    /// does not fit a line, `save_too_large` when the parts would pass `maxSaveBytes`, and `type_mismatch`
    /// for a value JSON cannot carry; nothing has been sent then.
    package static func lines(for save: SaveRequest, timeout: Duration?, maxLineBytes: Int, maxSaveBytes: Int?,
                              traceParent: String? = nil, traceState: String? = nil,
                              makeID: () -> RequestID) throws -> [Line] {
        // The limits come from the server's hello: trusted as sizes, not for arithmetic, so they are kept
        // where no sum or product below can overflow.
        let maxLineBytes = min(max(maxLineBytes, 64), 1 << 40)
        let maxSaveBytes = maxSaveBytes.map { min(max($0, 1), 1 << 50) }
        let changes = Changes(save)
        // A large save is sized from a sample of its changes: writing it whole only to learn that it must
        // be cut cost as much as writing its parts.
        var size: Int?
        if maxSaveBytes != nil, changes.count > 2 * sampleSize {
            let sample = try encode(Request(id: .int(0), operation: .save(changes.slice(0..<sampleSize)), timeout: timeout))
            let guess = sample.count / sampleSize * changes.count
            if guess / 2 > maxLineBytes { size = guess }
        }
        if size == nil {
            let id = makeID()
            let whole = try encode(Request(id: id, operation: .save(save), timeout: timeout, traceParent: traceParent, traceState: traceState))
            // The limit counts the line without its "\n".
            guard whole.count - 1 > maxLineBytes, maxSaveBytes != nil else { return [Line(id: id, bytes: whole)] }
            size = whole.count
        }
        guard let maxSaveBytes, let size else { throw PGModelError(.internalError, "a save was sized without a limit") }
        guard changes.count > 1 else {
            throw PGModelError(.lineTooLong, "the save's one change is \(size - 1) bytes as a request line, over the server's limit of \(maxLineBytes); nothing was sent",
                               model: changes.entity(at: 0))
        }
        // A quarter's room for rows longer than the average, so most saves are cut once.
        let target = max(1, maxLineBytes - maxLineBytes / 4)
        var ranges = evenRanges(count: changes.count, parts: min(changes.count, (size + target - 1) / target))
        while true {
            guard ranges.count <= SavePart.maximumCount else {
                throw PGModelError(.saveTooLarge, "the save needs more than \(SavePart.maximumCount) parts of at most \(maxLineBytes) bytes; nothing was sent")
            }
            let ids = ranges.map { _ in makeID() }
            let count = ranges.count
            let encoded = try encodeInHalves(count) { index in
                try encode(Request(id: ids[index], operation: .save(changes.slice(ranges[index])), timeout: timeout,
                                   part: SavePart(index: index, count: count), traceParent: traceParent, traceState: traceState))
            }
            var split: [Range<Int>] = []
            for (range, line) in zip(ranges, encoded) {
                guard line.count - 1 > maxLineBytes else {
                    split.append(range)
                    continue
                }
                guard range.count > 1 else {
                    throw PGModelError(.lineTooLong, "one \(changes.entity(at: range.lowerBound) ?? "") change of the save is \(line.count - 1) bytes as a request line, over the server's limit of \(maxLineBytes); nothing was sent",
                                       model: changes.entity(at: range.lowerBound))
                }
                let middle = range.lowerBound + range.count / 2
                split.append(range.lowerBound..<middle)
                split.append(middle..<range.upperBound)
            }
            if split.count == ranges.count {
                let total = encoded.reduce(0) { $0 + $1.count - 1 }
                guard total <= maxSaveBytes else {
                    throw PGModelError(.saveTooLarge, "the save comes to \(total) bytes in \(count) parts, over the server's limit of \(maxSaveBytes) for one save; nothing was sent (save in smaller transactions)")
                }
                return zip(ids, encoded).map { Line(id: $0, bytes: $1) }
            }
            // Part counts are in every line, so a part cut in two means writing them all again.
            ranges = split
        }
    }

    /// The changes a large save's size is guessed from.
    static let sampleSize = 256

    /// `count` lines written by `encode`, the first half on this thread and the second on another.
    private static func encodeInHalves(_ count: Int, _ encode: (Int) throws -> Data) throws -> [Data] {
        guard count > 1 else { return try (0..<count).map(encode) }
        let middle = count / 2
        let (first, second) = try ParallelPair.run({ try (0..<middle).map(encode) }, { try (middle..<count).map(encode) })
        return first + second
    }

    private static func encode(_ request: Request) throws -> Data {
        do {
            return try request.encodedLine()
        } catch {
            throw PGModelError(.typeMismatch, "the request contains a value JSON cannot carry (NaN or infinity)")
        }
    }

    /// `count` changes cut into `parts` contiguous runs whose lengths differ by one at most.
    static func evenRanges(count: Int, parts: Int) -> [Range<Int>] {
        let parts = max(1, min(parts, count))
        return (0..<parts).map { index in (count * index / parts)..<(count * (index + 1) / parts) }
    }

    /// A save's changes as one sequence: inserts, updates, deletes, links, batch deletes, shares.
    struct Changes {
        let save: SaveRequest

        init(_ save: SaveRequest) { self.save = save }

        var count: Int {
            save.inserts.count + save.updates.count + save.deletes.count + save.links.count + save.batchDeletes.count + save.shares.count
        }

        /// The changes in `range`, as a save of their own; the author and the saving process go with the first part.
        func slice(_ range: Range<Int>) -> SaveRequest {
            var start = 0
            func take<Element>(_ list: [Element]) -> [Element] {
                defer { start += list.count }
                let lower = min(max(range.lowerBound - start, 0), list.count)
                let upper = min(max(range.upperBound - start, 0), list.count)
                return lower < upper ? Array(list[lower..<upper]) : []
            }
            return SaveRequest(inserts: take(save.inserts), updates: take(save.updates), deletes: take(save.deletes),
                               links: take(save.links), batchDeletes: take(save.batchDeletes), shares: take(save.shares),
                               author: range.lowerBound == 0 ? save.author : nil,
                               bundleIdentifier: range.lowerBound == 0 ? save.bundleIdentifier : nil,
                               processIdentifier: range.lowerBound == 0 ? save.processIdentifier : nil,
                               mergePolicy: save.mergePolicy, mergeRules: save.mergeRules)
        }

        /// The entity of the change at `position`, for errors.
        func entity(at position: Int) -> String? {
            var position = position
            for entities in [save.inserts.map(\.entity), save.updates.map(\.entity), save.deletes.map(\.entity)] {
                if position < entities.count { return entities[position] }
                position -= entities.count
            }
            return nil
        }
    }
}
