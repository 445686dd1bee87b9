@_spi(PGModelInternals) import PGModelCore
import Testing

/// Identifier checks and quoting, which every rendered statement goes through: the byte-level forms
/// must accept and refuse exactly what the Unicode-property forms they replaced did.
@Suite("Naming")
struct NamingTests {
    @Test(arguments: ["a", "_", "_a1", "Trip", "start_date", "A9_z", String(repeating: "x", count: 63)])
    func validIdentifiers(name: String) {
        #expect(Naming.isValidIdentifier(name))
    }

    @Test(arguments: ["", "1a", "9", "a-b", "a b", "a\"b", "é", "aé", "Ωmega", "a.b", "$a", "a$",
                      String(repeating: "x", count: 64), "ＡＢＣ", "a\u{0}"])
    func invalidIdentifiers(name: String) {
        #expect(!Naming.isValidIdentifier(name))
    }

    @Test func quotingDoublesEmbeddedQuotes() {
        #expect(Naming.quoted("trip") == "\"trip\"")
        #expect(Naming.quoted("user") == "\"user\"")
        #expect(Naming.quoted("a\"b") == "\"a\"\"b\"")
        #expect(Naming.quoted("\"") == "\"\"\"\"")
        #expect(Naming.quoted("") == "\"\"")
        #expect(Naming.quoted("Zoë") == "\"Zoë\"")
    }
}
