import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

/// An interpreter of the Query IR over one row's stored values, with the meaning the IR documents (Swift's:
/// `nil == nil` is true). Running it next to `Predicate.evaluate` catches translation mistakes — swapped
/// operands, wrong operators, lost negations — without a database.
struct ReferenceEvaluator {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let row: [String: PGValue]

    func matches(_ expression: QueryExpression) throws -> Bool {
        try value(of: expression) == .bool(true)
    }

    func value(of expression: QueryExpression) throws -> PGValue {
        switch expression {
        case .key(let name):
            guard let stored = row[name] else { throw Failure(description: "no attribute \(name)") }
            return stored
        case .value(let v):
            return v
        case .isKind, .aggregate, .field, .arrayContains, .arrayElement, .arrayFold:
            throw Failure(description: "relationship expressions need the database")
        case .compare(let op, let a, let b):
            return .bool(try compare(op, try value(of: a), try value(of: b)))
        case .and(let operands):
            for operand in operands where try !matches(operand) { return .bool(false) }
            return .bool(true)
        case .or(let operands):
            for operand in operands where try matches(operand) { return .bool(true) }
            return .bool(false)
        case .not(let operand):
            return .bool(try !matches(operand))
        case .arithmetic(let op, let a, let b):
            return try arithmetic(op, try value(of: a), try value(of: b))
        case .negate(let operand):
            switch try value(of: operand) {
            case .int(let i): return .int(-i)
            case .double(let d): return .double(-d)
            case .decimal(let d): return .decimal(-d)
            case let other: throw Failure(description: "cannot negate \(other)")
            }
        case .conditional(let test, let a, let b):
            return try matches(test) ? try value(of: a) : try value(of: b)
        case .string(let op, let a, let b):
            guard case .string(let s) = try value(of: a), case .string(let t) = try value(of: b) else {
                throw Failure(description: "string operation on non-strings")
            }
            switch op {
            case .contains: return .bool(t.isEmpty || s.range(of: t) != nil)
            case .startsWith: return .bool(s.hasPrefix(t))
            case .localizedStandardContains:
                return .bool(!t.isEmpty && s.range(of: t, options: [.caseInsensitive, .diacriticInsensitive]) != nil)
            case .caseInsensitiveCompare: return .int(Int64(s.caseInsensitiveCompare(t).rawValue))
            // The test database's collation is code-point order (C.UTF-8).
            case .localizedCompare: return .int(s < t ? -1 : s > t ? 1 : 0)
            }
        case .in(let needle, let values):
            return .bool(values.contains(try value(of: needle)))
        case .coalesce(let a, let b):
            let first = try value(of: a)
            return first.isNull ? try value(of: b) : first
        }
    }

    private func compare(_ op: ComparisonOperator, _ a: PGValue, _ b: PGValue) throws -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        default: break
        }
        let order: ComparisonResult
        switch (a, b) {
        case (.int(let x), .int(let y)): order = x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.double(let x), .double(let y)): order = x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.decimal(let x), .decimal(let y)): order = x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.string(let x), .string(let y)): order = x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.date(let x), .date(let y)): order = x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        default: throw Failure(description: "cannot order \(a) and \(b)")
        }
        switch op {
        case .less: return order == .orderedAscending
        case .lessOrEqual: return order != .orderedDescending
        case .greater: return order == .orderedDescending
        case .greaterOrEqual: return order != .orderedAscending
        case .equal, .notEqual: return false
        }
    }

    private func arithmetic(_ op: ArithmeticOperator, _ a: PGValue, _ b: PGValue) throws -> PGValue {
        switch (a, b) {
        case (.int(let x), .int(let y)):
            switch op {
            case .add: return .int(x + y)
            case .subtract: return .int(x - y)
            case .multiply: return .int(x * y)
            case .divide: return .int(x / y)
            case .remainder: return .int(x % y)
            }
        case (.double(let x), .double(let y)):
            switch op {
            case .add: return .double(x + y)
            case .subtract: return .double(x - y)
            case .multiply: return .double(x * y)
            case .divide: return .double(x / y)
            case .remainder: throw Failure(description: "% on doubles")
            }
        case (.decimal(let x), .decimal(let y)):
            switch op {
            case .add: return .decimal(x + y)
            case .subtract: return .decimal(x - y)
            case .multiply: return .decimal(x * y)
            case .divide: return .decimal(x / y)
            case .remainder: throw Failure(description: "% on decimals")
            }
        default: throw Failure(description: "arithmetic on \(a) and \(b)")
        }
    }
}

@Suite("PredicateTranslator: translated IR agrees with Predicate.evaluate")
struct PredicateTranslatorEvaluationTests {
    static let rows: [TripRow] = {
        func row(_ name: String, _ destination: String, genre: String?, favorite: Bool, flag: Bool?, count: Int,
                 rating: Double, price: Decimal, day: Double, endDay: Double?, kind: TripKind, level: TripLevel,
                 optionalKind: TripKind?) -> TripRow {
            var r = TripRow()
            r.name = name
            r.destination = destination
            r.genre = genre
            r.isFavorite = favorite
            r.flag = flag
            r.count = count
            r.i16 = Int16(count * 3)
            r.u8 = UInt8(clamping: count)
            r.rating = rating
            r.score = Float(rating)
            r.price = price
            r.startDate = Date(timeIntervalSince1970: day * 86_400)
            r.endDate = endDay.map { Date(timeIntervalSince1970: $0 * 86_400) }
            r.kind = kind
            r.level = level
            r.optionalKind = optionalKind
            return r
        }
        return [
            row("Zoë's trip", "Paris", genre: "Rock", favorite: true, flag: true, count: 3, rating: 4.5, price: 120,
                day: 10, endDay: 12, kind: .business, level: .high, optionalKind: .personal),
            row("Weekend", "Rome", genre: nil, favorite: false, flag: nil, count: 0, rating: 2, price: 35.5,
                day: 20, endDay: nil, kind: .personal, level: .low, optionalKind: nil),
            row("ZOE", "Paris, France", genre: "Jazz", favorite: true, flag: false, count: 7, rating: 3.25, price: 0,
                day: 5, endDay: 30, kind: .personal, level: .low, optionalKind: .business),
            row("paris again", "Berlin", genre: "rock", favorite: false, flag: true, count: -2, rating: 5, price: 999.99,
                day: 15, endDay: 15, kind: .business, level: .high, optionalKind: nil),
            row("Été", "Montréal", genre: "", favorite: false, flag: false, count: 12, rating: 1.5, price: 10,
                day: 1, endDay: 2, kind: .business, level: .low, optionalKind: .personal),
            row("", "", genre: nil, favorite: true, flag: nil, count: 5, rating: 0, price: 5,
                day: 25, endDay: nil, kind: .personal, level: .high, optionalKind: nil),
        ]
    }()

    static let cases: [(String, Predicate<TripRow>)] = {
        let paris = "Paris", zoe = "zoe", empty = "", ete = "ete"
        let names = ["Weekend", "ZOE", "nobody"]
        let genres: [String?] = ["Rock", nil]
        let kinds: [TripKind] = [.personal]
        let business = TripKind.business
        let noKind: TripKind? = nil
        let levels: [TripLevel] = [.high]
        let same = ComparisonResult.orderedSame, before = ComparisonResult.orderedAscending
        let day12 = Date(timeIntervalSince1970: 12 * 86_400)
        let window = Date(timeIntervalSince1970: 5 * 86_400)...Date(timeIntervalSince1970: 15 * 86_400)
        let price = Decimal(100)
        return [
            ("==", #Predicate { $0.destination == paris }),
            ("!=", #Predicate { $0.destination != paris }),
            ("<", #Predicate { $0.count < 3 }),
            ("<=", #Predicate { $0.count <= 3 }),
            (">", #Predicate { $0.rating > 3.0 }),
            (">=", #Predicate { $0.price >= price }),
            ("string <", #Predicate { $0.name < "Weekend" }),
            ("date <", #Predicate { $0.startDate < day12 }),
            ("&&", #Predicate { $0.isFavorite && $0.count > 3 }),
            ("||", #Predicate { $0.isFavorite || $0.count > 3 }),
            ("!", #Predicate { !$0.isFavorite }),
            ("! of compound", #Predicate { !($0.isFavorite && $0.count > 3) }),
            ("bool key", #Predicate { $0.isFavorite }),
            ("== nil", #Predicate { $0.genre == nil }),
            ("!= nil", #Predicate { $0.genre != nil }),
            ("optional ==", #Predicate { $0.genre == "Rock" }),
            ("optional bool", #Predicate { $0.flag == true }),
            ("optional date", #Predicate { $0.endDate == day12 }),
            ("??", #Predicate { ($0.genre ?? "none") == "none" }),
            ("?? bool", #Predicate { $0.flag ?? false }),
            ("+", #Predicate { $0.count + 2 > 5 }),
            ("-", #Predicate { $0.count - 2 < 0 }),
            ("*", #Predicate { $0.count * 2 == 6 }),
            ("int /", #Predicate { $0.count / 2 == 1 }),
            ("%", #Predicate { $0.count % 2 == 1 }),
            ("float /", #Predicate { $0.rating / 2.0 > 1.5 }),
            ("decimal *", #Predicate { $0.price * 2 > 100 }),
            ("unary -", #Predicate { -$0.count > 0 }),
            ("ternary", #Predicate { $0.isFavorite ? $0.count > 4 : $0.rating > 1.75 }),
            ("ternary value", #Predicate { ($0.isFavorite ? 10 : 0) > $0.count }),
            ("contains", #Predicate { $0.destination.contains(paris) }),
            ("contains empty", #Predicate { $0.destination.contains(empty) }),
            ("captured contains key", #Predicate { "Paris, France and Rome".contains($0.destination) }),
            ("starts(with:)", #Predicate { $0.name.starts(with: "Z") }),
            ("localizedStandardContains", #Predicate { $0.name.localizedStandardContains(zoe) }),
            ("localizedStandardContains diacritics", #Predicate { $0.name.localizedStandardContains(ete) }),
            ("localizedStandardContains empty", #Predicate { $0.name.localizedStandardContains(empty) }),
            ("caseInsensitiveCompare ==", #Predicate { $0.name.caseInsensitiveCompare("zoe") == same }),
            ("caseInsensitiveCompare <", #Predicate { $0.name.caseInsensitiveCompare("p") == before }),
            ("in", #Predicate { names.contains($0.name) }),
            ("in with nil", #Predicate { genres.contains($0.genre) }),
            ("in enums", #Predicate { kinds.contains($0.kind) }),
            ("in int enums", #Predicate { levels.contains($0.level) }),
            ("enum ==", #Predicate { $0.kind == business }),
            ("optional enum == nil", #Predicate { $0.optionalKind == noKind }),
            ("closed range", #Predicate { (0...5).contains($0.count) }),
            ("half-open range", #Predicate { (0..<5).contains($0.count) }),
            ("captured date range", #Predicate { window.contains($0.startDate) }),
            ("narrow ints", #Predicate { $0.i16 > 8 && $0.u8 < 10 }),
            ("float", #Predicate { $0.score > 2 }),
            ("seed search", #Predicate {
                zoe.isEmpty ? true : $0.name.localizedStandardContains(zoe) || $0.destination.localizedStandardContains(zoe)
            }),
            ("seed search empty", #Predicate {
                empty.isEmpty ? true : $0.name.localizedStandardContains(empty) || $0.destination.localizedStandardContains(empty)
            }),
            ("seed endDate", #Predicate { $0.endDate ?? $0.startDate >= day12 }),
        ]
    }()

    @Test(arguments: 0..<cases.count)
    func agrees(_ index: Int) throws {
        let (label, predicate) = Self.cases[index]
        let expression = try tripTranslator.translate(predicate)
        for row in Self.rows {
            let expected = try predicate.evaluate(row)
            let actual = try ReferenceEvaluator(row: row.storedValues).matches(expression)
            #expect(actual == expected, "\(label) on \(row.name): IR \(expression)")
        }
    }

    @Test func everyCaseSelectsSomeButNotAllRows() throws {
        // A predicate that matches all rows or none would not notice a wrong translation; only the empty-string
        // edge cases are meant to.
        var uninformative: [String] = []
        for (label, predicate) in Self.cases {
            let count = try Self.rows.filter { try predicate.evaluate($0) }.count
            if count == 0 || count == Self.rows.count { uninformative.append(label) }
        }
        #expect(uninformative == ["contains empty", "localizedStandardContains empty", "seed search empty"], "uninformative cases: \(uninformative)")
    }
}
