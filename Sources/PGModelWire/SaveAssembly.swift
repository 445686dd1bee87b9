import PGModelCore

/// The parts of one save in parts on a connection, held until the last one arrives (PROTOCOL.md §4, A save
/// in parts): decides, without sockets, whether a part is held, refused, or completes the save, which then
/// runs as one transaction. A part out of order drops the open save, so its later parts are refused too and
/// it can never commit partly.
///
/// Bytes are the parts' line lengths. What the server holds across connections is bounded outside: each part
/// held is first `reserve`d, and every action that ends a save says how many reserved bytes it releases.
///
/// ```swift
/// var assembly = SaveAssembly(maxSaveBytes: 64 << 20)
/// switch assembly.receive(save, part: part, bytes: line.readableBytes, reserve: budget.reserve) {
/// case .held(let parts): write(Response(id: id, .held(parts)))
/// case .run(let whole, let releasing): write(await run(whole)); budget.release(releasing)
/// case .refuse(let error, let releasing): budget.release(releasing); write(Response(id: id, error: error))
/// }
/// ```
public struct SaveAssembly: Sendable {
    /// What to do with a part.
    public enum Action: Hashable, Sendable {
        /// Answer `{"held":n}`: the server holds `n` parts of the save.
        case held(Int)
        /// Run this save (every part's lists joined in part order), then release `releasing` reserved bytes.
        case run(SaveRequest, releasing: Int)
        /// Answer this error; the open save, if any, is dropped: release `releasing` reserved bytes.
        case refuse(WireError, releasing: Int)
    }

    /// The most bytes one save's parts may add up to.
    public let maxSaveBytes: Int

    private struct OpenSave: Sendable {
        var count: Int
        var next: Int
        var save: SaveRequest
        var bytes: Int
    }

    private var open: OpenSave?

    public init(maxSaveBytes: Int) {
        self.maxSaveBytes = max(1, maxSaveBytes)
    }

    /// The reserved bytes of the save being held: what closing the connection releases.
    public var heldBytes: Int { open?.bytes ?? 0 }

    /// Decides about part `part` of a save, whose line was `bytes` long. `reserve` is asked for the bytes of
    /// a part to be held (never for the last part, which runs at once); false refuses the part.
    public mutating func receive(_ save: SaveRequest, part: SavePart, bytes: Int, reserve: (Int) -> Bool) -> Action {
        if part.index == 0 {
            // A new save: whatever was open was abandoned by its client.
            let released = drop()
            if part.count == 1 { return .run(save, releasing: released) }
            guard bytes <= maxSaveBytes else { return .refuse(tooLarge(bytes), releasing: released) }
            guard reserve(bytes) else { return .refuse(Self.serverFull, releasing: released) }
            open = OpenSave(count: part.count, next: 1, save: save, bytes: bytes)
            return .held(1)
        }
        guard var current = open else {
            return .refuse(WireError(.invalidField,
                                     "part \(part.index) of a save that is not open: a save in parts starts with part 0 (an earlier part was refused, or the save was dropped)",
                                     field: "part"), releasing: 0)
        }
        guard part.count == current.count else {
            return .refuse(WireError(.invalidField,
                                     "'parts' is \(part.count) but the open save has \(current.count) parts; the save was dropped",
                                     field: "parts"), releasing: drop())
        }
        guard part.index == current.next else {
            return .refuse(WireError(.invalidField,
                                     "expected part \(current.next) of \(current.count), got part \(part.index); the save was dropped",
                                     field: "part"), releasing: drop())
        }
        let total = current.bytes + bytes
        guard total <= maxSaveBytes else { return .refuse(tooLarge(total), releasing: drop()) }
        if part.isLast {
            open = nil
            current.save.append(save)
            return .run(current.save, releasing: current.bytes)
        }
        guard reserve(bytes) else { return .refuse(Self.serverFull, releasing: drop()) }
        current.save.append(save)
        current.bytes = total
        current.next += 1
        open = current
        return .held(current.next)
    }

    /// Drops the open save, if any; returns its reserved bytes.
    public mutating func drop() -> Int {
        defer { open = nil }
        return heldBytes
    }

    private func tooLarge(_ bytes: Int) -> WireError {
        WireError(.saveTooLarge,
                  "the save's parts come to \(bytes) bytes or more, over the server's limit of \(maxSaveBytes) for one save; the save was dropped (save in smaller transactions, or raise --max-save-bytes)")
    }

    private static let serverFull = WireError(
        .saveTooLarge, "the server holds as many parts of unfinished saves as it will; the save was dropped: try again later")
}

extension SaveRequest {
    /// Appends `part`'s lists to this save's; the first `author` given counts.
    mutating func append(_ part: SaveRequest) {
        inserts += part.inserts
        updates += part.updates
        deletes += part.deletes
        links += part.links
        batchDeletes += part.batchDeletes
        shares += part.shares
        if author == nil { author = part.author }
    }
}
