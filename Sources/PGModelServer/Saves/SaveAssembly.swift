@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// The parts of one save in parts on a connection, held until the last one arrives (PROTOCOL.md §4, A save
/// in parts): decides, without sockets, whether a part is held, refused, or completes the save, which then
/// runs as one transaction. A part out of order drops the open save, so its later parts are refused too and
/// it can never commit partly; so does a part 0 while another save is open (two saves interleaved on one
/// connection must not be spliced into one).
///
/// Two sizes are kept for each part. Its line's length counts towards ``maxSaveBytes``, the limit a client
/// can check before sending. What the server holds across connections is bounded outside, in memory: each
/// part held is first `reserve`d at the larger of its line length and an estimate of what its decoded
/// changes take (``SaveRequest/approximateMemoryBytes``), and every action that ends a save says how many
/// reserved bytes it releases.
///
/// ```swift
/// var assembly = SaveAssembly(maxSaveBytes: 64 << 20)
/// switch assembly.receive(save, part: part, bytes: line.readableBytes, reserve: budget.reserve) {
/// case .held(let parts): write(Response(id: id, .held(parts)))
/// case .run(let whole, let releasing): write(await run(whole)); budget.release(releasing)
/// case .refuse(let error, let releasing): budget.release(releasing); write(Response(id: id, error: error))
/// }
/// ```
@_spi(PGModelInternals) public struct SaveAssembly: Sendable {
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
    /// How long one save in parts may take from its part 0 to its last part; a part after that is refused
    /// with `timeout` and the save dropped. `nil`: no limit.
    public let maxLifetime: Duration?

    private struct OpenSave: Sendable {
        var count: Int
        var next: Int
        var save: SaveRequest
        /// The parts' line bytes, for ``maxSaveBytes``.
        var bytes: Int
        /// What was reserved for the held parts: what dropping them releases.
        var reserved: Int
        /// When part 0 arrived.
        var started: ContinuousClock.Instant
    }

    private var open: OpenSave?

    public init(maxSaveBytes: Int, maxLifetime: Duration? = nil) {
        self.maxSaveBytes = max(1, maxSaveBytes)
        self.maxLifetime = maxLifetime
    }

    /// When the open save's lifetime ends (``maxLifetime`` after its part 0); nil without an open save
    /// or a lifetime.
    public var expiry: ContinuousClock.Instant? {
        guard let open, let maxLifetime else { return nil }
        return open.started + maxLifetime
    }

    /// The reserved bytes of the save being held: what closing the connection releases.
    public var heldBytes: Int { open?.reserved ?? 0 }

    /// Whether a save is open (some of its parts held, its last part not yet received).
    public var isHolding: Bool { open != nil }

    /// Decides about part `part` of a save, whose line was `bytes` long and was read at `now`. `reserve` is
    /// asked for the memory of a part to be held (never for the last part, which runs at once); false
    /// refuses the part.
    public mutating func receive(_ save: SaveRequest, part: SavePart, bytes: Int, now: ContinuousClock.Instant = .now,
                                 reserve: (Int) -> Bool) -> Action {
        if part.index == 0 {
            if let current = open {
                // Two saves interleaved on one connection: neither may commit with the other's parts.
                return .refuse(WireError(.invalidField,
                                         "part 0 of a new save while part \(current.next) of \(current.count) of another is awaited: both saves were dropped (send one save's parts before the next save's)",
                                         field: "part"), releasing: drop())
            }
            if part.count == 1 { return .run(save, releasing: 0) }
            guard bytes <= maxSaveBytes else { return .refuse(tooLarge(bytes), releasing: 0) }
            let memory = Self.memory(of: save, bytes: bytes)
            guard reserve(memory) else { return .refuse(Self.serverFull, releasing: 0) }
            open = OpenSave(count: part.count, next: 1, save: save, bytes: bytes, reserved: memory, started: now)
            return .held(1)
        }
        guard var current = open else {
            return .refuse(WireError(.invalidField,
                                     "part \(part.index) of a save that is not open: a save in parts starts with part 0 (an earlier part was refused, or the save was dropped)",
                                     field: "part"), releasing: 0)
        }
        if let expiry, now > expiry, let maxLifetime {
            return .refuse(WireError(.timeout,
                                     "the save in parts took longer than \(maxLifetime.components.seconds) s from its first part; it was dropped (send its parts faster, or save in smaller transactions)"),
                           releasing: drop())
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
        // The held lists must have one owner while they grow: appending to a copy that `open` still shares
        // would copy every part held so far, on each part.
        open = nil
        if part.isLast {
            current.save.append(save)
            return .run(current.save, releasing: current.reserved)
        }
        let memory = Self.memory(of: save, bytes: bytes)
        guard reserve(memory) else { return .refuse(Self.serverFull, releasing: current.reserved) }
        current.save.append(save)
        current.bytes = total
        current.reserved += memory
        current.next += 1
        open = current
        return .held(current.next)
    }

    /// What holding `save`, decoded from a line of `bytes`, is counted as against the server's budget: its
    /// decoded size when that is larger than its line. A batch delete's predicate is a tree of nodes, several
    /// times its JSON once decoded; a part with any is counted at eight times its line.
    static func memory(of save: SaveRequest, bytes: Int) -> Int {
        let lines = save.batchDeletes.isEmpty ? bytes : (bytes > Int.max / 8 ? Int.max : bytes * 8)
        return max(lines, save.approximateMemoryBytes)
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
    /// Appends `part`'s lists to this save's; the first `author` (and saving process) given counts.
    mutating func append(_ part: SaveRequest) {
        inserts += part.inserts
        updates += part.updates
        deletes += part.deletes
        links += part.links
        batchDeletes += part.batchDeletes
        shares += part.shares
        if author == nil { author = part.author }
        if bundleIdentifier == nil { bundleIdentifier = part.bundleIdentifier }
        if processIdentifier == nil { processIdentifier = part.processIdentifier }
        // Every part carries the save's policy and rules; a part saying otherwise than the default counts.
        if mergePolicy == .error { mergePolicy = part.mergePolicy }
        for (entity, rules) in part.mergeRules { mergeRules[entity, default: [:]].merge(rules) { first, _ in first } }
    }
}
