import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelServer
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// The pure parts of the service's limits, without sockets or clocks: the PROXY protocol header parser and
/// the trusted-proxy list, log escaping, the per-user held-save ledger, a save's lifetime, and `hello`'s
/// bounds.
@Suite("Service limits: PROXY protocol, log escaping, held saves, hello bounds")
struct ServiceLimitsWireTests {
    static func v2(command: UInt8 = 0x21, family: UInt8, address: [UInt8], extra: [UInt8] = []) -> [UInt8] {
        let block = address + extra
        return ProxyHeaderParser.v2Signature + [command, family, UInt8(block.count >> 8), UInt8(block.count & 0xFF)] + block
    }

    @Test("v1 TCP4 and TCP6 headers give the client's address; the bytes after the header are the client's")
    func v1() {
        var parser = ProxyHeaderParser()
        #expect(parser.feed(Array("PROXY TCP4 203.0.113.7 10.0.0.1 56324 7432\r\n{\"id\":1}".utf8))
                == .header(.proxied(source: "203.0.113.7", sourcePort: 56324), remainder: Array("{\"id\":1}".utf8)))
        var six = ProxyHeaderParser()
        #expect(six.feed(Array("PROXY TCP6 2001:DB8::1 2001:db8::2 1 2\r\n".utf8)) == .header(.proxied(source: "2001:db8::1", sourcePort: 1), remainder: []))
        var mapped = ProxyHeaderParser()
        #expect(mapped.feed(Array("PROXY TCP6 ::ffff:198.51.100.4 ::1 1 2\r\n".utf8)) == .header(.proxied(source: "198.51.100.4", sourcePort: 1), remainder: []))
        var unknown = ProxyHeaderParser()
        #expect(unknown.feed(Array("PROXY UNKNOWN whatever\r\n".utf8)) == .header(.local, remainder: []))
    }

    @Test("a header split over many reads, byte by byte, is read the same")
    func split() {
        for bytes in [Array("PROXY TCP4 192.0.2.1 192.0.2.2 1000 2000\r\nX".utf8),
                      Self.v2(family: 0x11, address: [192, 0, 2, 1, 192, 0, 2, 2, 0x03, 0xE8, 0x07, 0xD0]) + [0x58]] {
            var parser = ProxyHeaderParser()
            // Every byte but the header's last alone; that one with the client's first byte.
            for byte in bytes.dropLast(2) {
                #expect(parser.feed([byte]) == .needMoreBytes)
            }
            #expect(parser.feed(bytes.suffix(2)) == .header(.proxied(source: "192.0.2.1", sourcePort: 1000), remainder: [0x58]))
        }
    }

    @Test("v2: PROXY over IPv4 and IPv6, LOCAL, TLVs skipped, other families local")
    func v2() {
        var four = ProxyHeaderParser()
        #expect(four.feed(Self.v2(family: 0x11, address: [203, 0, 113, 9, 10, 0, 0, 1, 0xC3, 0x50, 0x1D, 0x08], extra: [0x04, 0x00, 0x01, 0x00]) + [0x7B])
                == .header(.proxied(source: "203.0.113.9", sourcePort: 50000), remainder: [0x7B]))
        var six = ProxyHeaderParser()
        let source: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [0x05]
        #expect(six.feed(Self.v2(family: 0x21, address: source + [UInt8](repeating: 0, count: 16) + [0, 80, 0, 81]))
                == .header(.proxied(source: "2001:db8::5", sourcePort: 80), remainder: []))
        var local = ProxyHeaderParser()
        #expect(local.feed(Self.v2(command: 0x20, family: 0x00, address: [])) == .header(.local, remainder: []))
        var unix = ProxyHeaderParser()
        #expect(unix.feed(Self.v2(family: 0x31, address: [UInt8](repeating: 0, count: 216))) == .header(.local, remainder: []))
    }

    @Test("anything else is invalid: another protocol, a malformed or overlong header, a bad version or command")
    func invalid() {
        func verdict(_ bytes: [UInt8]) -> ProxyHeaderParser.Verdict {
            var parser = ProxyHeaderParser()
            return parser.feed(bytes)
        }
        func isInvalid(_ bytes: [UInt8]) -> Bool {
            if case .invalid = verdict(bytes) { return true }
            return false
        }
        #expect(isInvalid(Array(#"{"id":1,"op":"hello"}"#.utf8)))
        #expect(isInvalid(Array("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n".utf8)), "LF without CR")
        #expect(isInvalid(Array("PROXY TCP4 1.2.3.400 5.6.7.8 1 2\r\n".utf8)))
        #expect(isInvalid(Array("PROXY TCP4 01.2.3.4 5.6.7.8 1 2\r\n".utf8)))
        #expect(isInvalid(Array("PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n".utf8)))
        #expect(isInvalid(Array("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n".utf8)))
        #expect(isInvalid(Array("PROXY TCP6 1.2.3.4 ::1 1 2\r\n".utf8)))
        #expect(isInvalid(Array("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n".utf8)))
        #expect(isInvalid(Array(("PROXY UNKNOWN " + String(repeating: "x", count: 120)).utf8)), "no CR LF within 107 bytes")
        #expect(isInvalid(ProxyHeaderParser.v2Signature + [0x11, 0x11, 0, 12]), "version 1 in a v2 header")
        #expect(isInvalid(ProxyHeaderParser.v2Signature + [0x22, 0x11, 0, 12]), "command 2")
        #expect(isInvalid(ProxyHeaderParser.v2Signature + [0x21, 0x11, 0xFF, 0xFF]), "a 65,535-byte address block")
        #expect(isInvalid(Self.v2(family: 0x11, address: [1, 2, 3])), "too short for IPv4")
        #expect(verdict(Array("PRO".utf8)) == .needMoreBytes)
        #expect(ProxyHeaderParser().endOfInput() != .needMoreBytes)
    }

    @Test("trusted proxies: addresses and CIDR blocks, IPv4 and IPv6, mapped addresses; malformed entries refused")
    func trustedProxies() throws {
        let trusted = try TrustedProxies(["10.0.0.0/8", "192.0.2.7", "fd00::/8", "::ffff:172.16.0.0/108"])
        #expect(trusted.contains("10.200.3.4"))
        #expect(trusted.contains("::ffff:10.1.1.1"))
        #expect(!trusted.contains("11.0.0.1"))
        #expect(trusted.contains("192.0.2.7"))
        #expect(!trusted.contains("192.0.2.8"))
        #expect(trusted.contains("fd12:3456::1"))
        #expect(!trusted.contains("fe80::1"))
        #expect(trusted.contains("172.16.9.9"))
        #expect(!trusted.contains("172.32.0.1"))
        #expect(!trusted.contains("not an address"))
        #expect(TrustedProxies.none.isEmpty && !TrustedProxies.none.contains("127.0.0.1"))
        for bad in ["10.0.0.0/33", "10.0.0/8", "example.com", "::1/129", "1.2.3.4/-1", ""] {
            #expect(throws: WireError.self, "\(bad)") { try TrustedProxies([bad]) }
        }
        #expect(IPAddressText.text(of: IPAddressText.ipv6Bytes("2001:db8:0:0:1:0:0:1") ?? []) == "2001:db8::1:0:0:1")
        #expect(IPAddressText.text(of: IPAddressText.ipv6Bytes("::") ?? []) == "::")
    }

    @Test("logged text: control characters escaped (no forged lines), long text cut")
    func logText() {
        #expect("\(LogText("alice\nINFO forged login user=admin"))" == #"alice\nINFO forged login user=admin"#)
        #expect("\(LogText("a\r\u{0}\u{1b}[31m\u{2028}\"\\"))" == #"a\r\u{0}\u{1b}[31m\u{2028}\"\\"#)
        let long = "\(LogText(String(repeating: "x", count: 10_000)))"
        #expect(long.count == LogText.maximumCharacters + 1)
        #expect("\(LogText("Zoë 日本"))" == "Zoë 日本")
    }

    @Test("held saves: each user gets at most their share, all users together at most the limit; releases give room back")
    func heldSaveLedger() {
        var ledger = HeldSaveLedger<String>(limit: 1_000, perUserLimit: 400)
        #expect(ledger.reserve(300, for: "slow") == true)
        #expect(ledger.reserve(200, for: "slow") == false, "past the user's share, from any of their connections")
        #expect(ledger.reserve(100, for: "slow") == true)
        #expect(ledger.reserve(400, for: "alice") == true)
        #expect(ledger.reserve(200, for: "bob") == true)
        #expect(ledger.reserve(101, for: "carol") == false, "past the server's limit")
        ledger.release(400, for: "slow")
        #expect(ledger.held == 600 && ledger.held(by: "slow") == 0 && ledger.holders == 2)
        #expect(ledger.reserve(300, for: "carol") == true)
        ledger.release(999, for: "carol")
        ledger.release(10, for: "nobody")
        #expect(ledger.held == 600)
        #expect(ledger.reserve(-1, for: "bob") == false)
        #expect(HeldSaveLedger<String>(limit: 10, perUserLimit: 50).perUserLimit == 10)
    }

    @Test("a save in parts past its lifetime is refused with timeout and dropped, however regularly its parts came")
    func saveLifetime() {
        var assembly = SaveAssembly(maxSaveBytes: 1 << 20, maxLifetime: .seconds(600))
        let start = ContinuousClock.now
        let part = SaveRequest(inserts: [RowValues(entity: "Trip", id: UUID.v7(), values: ["name": .string("a")])])
        var reserved = 0
        #expect(assembly.receive(part, part: SavePart(index: 0, count: 100), bytes: 10, now: start) { reserved += $0; return true } == .held(1))
        #expect(assembly.expiry == start + .seconds(600))
        // A part every 59 s keeps the save under the per-part timeout, but not under its lifetime.
        for index in 1...10 {
            #expect(assembly.receive(part, part: SavePart(index: index, count: 100), bytes: 10, now: start + .seconds(59 * index)) { reserved += $0; return true } == .held(index + 1))
        }
        guard case .refuse(let error, let releasing) = assembly.receive(part, part: SavePart(index: 11, count: 100), bytes: 10, now: start + .seconds(649), reserve: { _ in true }) else {
            Issue.record("a part past the lifetime was not refused")
            return
        }
        #expect(error.code == .timeout)
        #expect(releasing == reserved)
        #expect(!assembly.isHolding && assembly.expiry == nil)
    }

    @Test("hello: a user name over 128 characters or a password over 1 KiB is invalid_field before any check")
    func helloBounds() {
        func answer(_ user: String, _ password: String = "secret") -> SessionStateMachine.Action {
            var session = SessionStateMachine(maxFailedAuthentications: 5, maxLineBytes: 1 << 20, maxSaveBytes: 1 << 20)
            return session.receive(Request(id: 1, operation: .hello(HelloPayload(user: user, password: password))))
        }
        func field(_ action: SessionStateMachine.Action) -> String? {
            guard case .respond(let response) = action, case .failure(let error) = response.result, error.code == .invalidField else { return nil }
            return error.field
        }
        #expect(field(answer(String(repeating: "u", count: 129))) == "user")
        #expect(field(answer("")) == "user")
        #expect(field(answer("alice", String(repeating: "p", count: 1_025))) == "password")
        if case .authenticate = answer(String(repeating: "é", count: 128)) {} else { Issue.record("128 characters are allowed") }
    }
}
