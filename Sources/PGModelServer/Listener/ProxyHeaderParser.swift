import Foundation
@_spi(PGModelInternals) import PGModelWire

/// What a PROXY protocol header (HAProxy's, versions 1 and 2) says about a connection a load balancer
/// passed on: the client's own address, or nothing (a health check, `LOCAL` / `UNKNOWN`).
@_spi(PGModelInternals) public enum ProxyHeader: Hashable, Sendable {
    /// The connection was made by the proxy itself (v2 `LOCAL`, v1 `UNKNOWN`, or an address family
    /// other than TCP over IPv4/IPv6): the socket's own peer address stands.
    case local
    /// The connection is relayed for the client at `source` (an IP address in text form, without its
    /// port) and port `sourcePort`.
    case proxied(source: String, sourcePort: Int)
}

/// Reads the PROXY protocol header (version 1, text, or version 2, binary) that a trusted load balancer
/// sends before anything else on a connection, without sockets: bytes in, a verdict out.
///
/// The header is bounded: a v1 line is at most 107 bytes with its `"\r\n"`, a v2 header at most
/// 16 + ``maximumV2AddressBytes`` bytes; anything longer, malformed, or of another protocol is
/// ``Verdict/invalid(_:)``, and the connection must be closed (a trusted proxy always sends a header).
///
/// ```swift
/// var parser = ProxyHeaderParser()
/// switch parser.feed(bytes) {
/// case .needMoreBytes: break                       // wait for the next read
/// case .header(let header, let rest): …            // `rest` is the client's first bytes
/// case .invalid(let reason): close(reason)
/// }
/// ```
@_spi(PGModelInternals) public struct ProxyHeaderParser: Sendable {
    /// What the bytes fed so far amount to.
    public enum Verdict: Hashable, Sendable {
        /// No complete header yet (and nothing wrong so far).
        case needMoreBytes
        /// A complete header, and the bytes that followed it (the client's own first bytes).
        case header(ProxyHeader, remainder: [UInt8])
        /// Not a PROXY header; the reason, for the log.
        case invalid(String)
    }

    /// The longest v1 header, `"\r\n"` included (the specification's limit).
    public static let maximumV1Bytes = 107
    /// The most bytes a v2 header's address block (addresses and TLVs) may have here; the
    /// specification allows 65,535, but no address family needs more than 216 and TLVs are ignored.
    public static let maximumV2AddressBytes = 1_024
    /// The v2 signature: `\r\n\r\n\0\r\nQUIT\n`.
    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    static let v1Prefix: [UInt8] = Array("PROXY ".utf8)

    private var buffer: [UInt8] = []
    private var done = false

    public init() {}

    /// Adds `bytes` read from the connection and says whether the header is complete. After a
    /// ``Verdict/header(_:remainder:)`` or ``Verdict/invalid(_:)`` the parser is finished and must not be fed again.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> Verdict where Bytes.Element == UInt8 {
        guard !done else { return .invalid("the header was already read") }
        buffer.append(contentsOf: bytes)
        let verdict = parse()
        if case .needMoreBytes = verdict { return verdict }
        done = true
        buffer = []
        return verdict
    }

    /// The verdict when the connection ends before the header is complete.
    public func endOfInput() -> Verdict {
        .invalid(buffer.isEmpty ? "the connection closed before its PROXY header" : "the connection closed inside its PROXY header")
    }

    private func parse() -> Verdict {
        // Which version: decided by the first bytes, before the whole prefix is there.
        let v1Prefix = Self.v1Prefix, v2Signature = Self.v2Signature
        let seen = buffer.count
        if buffer.prefix(v2Signature.count).elementsEqual(v2Signature.prefix(min(seen, v2Signature.count))) {
            return seen < 16 ? .needMoreBytes : parseV2()
        }
        if buffer.prefix(v1Prefix.count).elementsEqual(v1Prefix.prefix(min(seen, v1Prefix.count))) {
            return parseV1()
        }
        return .invalid("not a PROXY protocol header")
    }

    private func parseV1() -> Verdict {
        guard let end = buffer.firstIndex(of: 0x0A) else {
            return buffer.count >= Self.maximumV1Bytes ? .invalid("a PROXY v1 header longer than \(Self.maximumV1Bytes) bytes") : .needMoreBytes
        }
        guard end + 1 <= Self.maximumV1Bytes else { return .invalid("a PROXY v1 header longer than \(Self.maximumV1Bytes) bytes") }
        guard end >= 1, buffer[end - 1] == 0x0D else { return .invalid("a PROXY v1 header must end with CR LF") }
        let remainder = Array(buffer[(end + 1)...])
        guard let line = String(validating: buffer[..<(end - 1)], as: UTF8.self), line.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            return .invalid("a PROXY v1 header must be printable ASCII")
        }
        let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 2, fields[0] == "PROXY" else { return .invalid("a malformed PROXY v1 header") }
        switch fields[1] {
        case "UNKNOWN":
            // The rest of the line is to be ignored.
            return .header(.local, remainder: remainder)
        case "TCP4", "TCP6":
            guard fields.count == 6 else { return .invalid("a PROXY v1 header has 6 fields for TCP4 and TCP6") }
            let isV6 = fields[1] == "TCP6"
            guard let source = isV6 ? IPAddressText.ipv6Bytes(fields[2]) : IPAddressText.ipv4Bytes(fields[2]),
                  (isV6 ? IPAddressText.ipv6Bytes(fields[3]) : IPAddressText.ipv4Bytes(fields[3])) != nil else {
                return .invalid("a PROXY v1 header with a malformed \(isV6 ? "IPv6" : "IPv4") address")
            }
            guard let sourcePort = Self.port(fields[4]), Self.port(fields[5]) != nil else {
                return .invalid("a PROXY v1 header with a malformed port")
            }
            return .header(.proxied(source: IPAddressText.text(of: source), sourcePort: sourcePort), remainder: remainder)
        default:
            return .invalid("a PROXY v1 header with an unknown protocol")
        }
    }

    /// A decimal port, 0 to 65535, without a sign or leading zeros.
    private static func port(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              text == "0" || !text.hasPrefix("0"), let value = Int(text), value <= 65535 else { return nil }
        return value
    }

    private func parseV2() -> Verdict {
        let versionAndCommand = buffer[12], family = buffer[13]
        guard versionAndCommand >> 4 == 2 else { return .invalid("a PROXY v2 header of an unknown version") }
        guard versionAndCommand & 0x0F <= 0x1 else { return .invalid("a PROXY v2 header with an unknown command") }
        let length = Int(buffer[14]) << 8 | Int(buffer[15])
        guard length <= Self.maximumV2AddressBytes else {
            return .invalid("a PROXY v2 header with \(length) address bytes, more than \(Self.maximumV2AddressBytes)")
        }
        guard buffer.count >= 16 + length else { return .needMoreBytes }
        let block = Array(buffer[16..<(16 + length)])
        let remainder = Array(buffer[(16 + length)...])
        if versionAndCommand & 0x0F == 0x0 {
            // LOCAL: the proxy's own connection (a health check); the addresses are to be ignored.
            return .header(.local, remainder: remainder)
        }
        switch family {
        case 0x11:   // TCP over IPv4: source, destination, source port, destination port.
            guard block.count >= 12 else { return .invalid("a PROXY v2 header too short for IPv4 addresses") }
            let port = Int(block[8]) << 8 | Int(block[9])
            return .header(.proxied(source: IPAddressText.text(of: Array(block[0..<4])), sourcePort: port), remainder: remainder)
        case 0x21:   // TCP over IPv6.
            guard block.count >= 36 else { return .invalid("a PROXY v2 header too short for IPv6 addresses") }
            let port = Int(block[32]) << 8 | Int(block[33])
            return .header(.proxied(source: IPAddressText.text(of: Array(block[0..<16])), sourcePort: port), remainder: remainder)
        case 0x00, 0x12, 0x22, 0x31, 0x32:
            // UNSPEC, UDP, or UNIX sockets: nothing this service can use; the socket's own address stands.
            return .header(.local, remainder: remainder)
        default:
            return .invalid("a PROXY v2 header with an unknown address family")
        }
    }
}

/// IP addresses as text and bytes, for the PROXY protocol and the trusted-proxy list: strict parsing (no
/// zone ids, no leading zeros in IPv4 parts), and one canonical text form.
@_spi(PGModelInternals) public enum IPAddressText {
    /// The 4 bytes of a dotted-quad IPv4 address, or nil.
    public static func ipv4Bytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                  part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The 16 bytes of an IPv6 address (with `::`, and an IPv4 tail such as `::ffff:10.0.0.1`), or nil.
    public static func ipv6Bytes(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 45, !text.isEmpty else { return nil }
        var head: [UInt8] = [], tail: [UInt8] = []
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var bytes: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, allowIPv4Tail, piece.contains(".") {
                    guard let v4 = ipv4Bytes(String(piece)) else { return nil }
                    bytes += v4
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return bytes
        }
        if halves.count == 2 {
            guard let h = groups(halves[0], allowIPv4Tail: false), let t = groups(halves[1], allowIPv4Tail: true),
                  h.count + t.count <= 14 else { return nil }
            head = h
            tail = t
            return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
        }
        guard let all = groups(text, allowIPv4Tail: true), all.count == 16 else { return nil }
        return all
    }

    /// The bytes of an IPv4 or IPv6 address in text form, an IPv4-mapped IPv6 address as its IPv4 bytes.
    public static func bytes(_ text: String) -> [UInt8]? {
        if let v4 = ipv4Bytes(text) { return v4 }
        guard let v6 = ipv6Bytes(text) else { return nil }
        return unmapped(v6)
    }

    /// `::ffff:a.b.c.d` as `a.b.c.d`'s 4 bytes; other addresses unchanged.
    public static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return bytes }
        return Array(bytes[12..<16])
    }

    /// The canonical text of 4 or 16 address bytes: dotted quad, or lowercase IPv6 with the longest run
    /// of zero groups as `::` (RFC 5952); an IPv4-mapped IPv6 address as its IPv4 text.
    public static func text(of bytes: [UInt8]) -> String {
        let bytes = unmapped(bytes)
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return "unknown" }
        let groups = (0..<8).map { Int(bytes[2 * $0]) << 8 | Int(bytes[2 * $0 + 1]) }
        var best: Range<Int>?
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index >= 2, (best?.count ?? 0) < end - index { best = index..<end }
            index = end
        }
        let hex = groups.map { String($0, radix: 16) }
        guard let best else { return hex.joined(separator: ":") }
        return hex[..<best.lowerBound].joined(separator: ":") + "::" + hex[best.upperBound...].joined(separator: ":")
    }
}

/// Which peers may send a PROXY protocol header: addresses and CIDR blocks (`10.0.0.0/8`, `fd00::/8`,
/// `192.0.2.7`). A connection from anyone else is never read for a header, so a client cannot claim
/// another address.
///
/// ```swift
/// let trusted = try TrustedProxies(["10.0.0.0/8", "192.0.2.7"])
/// trusted.contains("10.1.2.3")   // true
/// ```
@_spi(PGModelInternals) public struct TrustedProxies: Hashable, Sendable {
    private struct Block: Hashable, Sendable {
        var bytes: [UInt8]
        var prefix: Int
    }

    private var blocks: [Block]

    /// Nobody: the PROXY protocol is off.
    public static let none = TrustedProxies(blocks: [])

    private init(blocks: [Block]) {
        self.blocks = blocks
    }

    /// Parses `entries`; throws ``WireError`` (`invalid_configuration`) naming a malformed one.
    public init(_ entries: [String]) throws {
        var blocks: [Block] = []
        for entry in entries {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), var bytes = IPAddressText.ipv4Bytes(String(parts[0])) ?? IPAddressText.ipv6Bytes(String(parts[0])) else {
                throw WireError(.invalidConfiguration, "'\(entry)' is not an IP address or CIDR block (such as 10.0.0.0/8)")
            }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let value = Int(parts[1]), (0...bytes.count * 8).contains(value), parts[1].allSatisfy(\.isNumber) else {
                    throw WireError(.invalidConfiguration, "'\(entry)' has a prefix length outside 0...\(bytes.count * 8)")
                }
                prefix = value
            }
            // `::ffff:10.0.0.0/104` means IPv4's 10.0.0.0/8: peers are compared unmapped.
            if bytes.count == 16, IPAddressText.unmapped(bytes).count == 4, prefix >= 96 {
                bytes = IPAddressText.unmapped(bytes)
                prefix -= 96
            }
            blocks.append(Block(bytes: bytes, prefix: prefix))
        }
        self.blocks = blocks
    }

    /// Whether no peer is trusted.
    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` (an IP address in text form) is one of the trusted proxies.
    public func contains(_ address: String) -> Bool {
        guard !blocks.isEmpty, let bytes = IPAddressText.bytes(address) else { return false }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            let whole = block.prefix / 8, rest = block.prefix % 8
            guard bytes[..<whole].elementsEqual(block.bytes[..<whole]) else { return false }
            guard rest > 0 else { return true }
            let mask = UInt8(0xFF) << (8 - rest)
            return bytes[whole] & mask == block.bytes[whole] & mask
        }
    }
}
