import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A Swift type that PGModel stores in one column.
///
/// String, Bool, the integer types up to 64 bits (except `UInt` and `UInt64`, which PostgreSQL cannot
/// hold), Double, Float, Decimal, Date, UUID, Data, URL and `Optional` of each conform. Enums with a
/// `String` or integer raw value are stored as their raw value without conforming.
///
/// ```swift
/// let v = "Paris".pgValue          // .string("Paris")
/// let s = try String(pgValue: v)   // "Paris"
/// ```
public protocol PersistableAttribute: Codable, SendableMetatype {
    /// The column's storage type.
    static var attributeType: AttributeType { get }
    /// Whether `nil` is a value of this type.
    static var isOptional: Bool { get }
    /// The stored form.
    var pgValue: PGValue { get }
    /// Restores a value from its stored form; throws `typeMismatch` when `pgValue` is of another kind.
    init(pgValue: PGValue) throws
}

extension PersistableAttribute {
    public static var isOptional: Bool { false }
}

@usableFromInline
func mismatch(_ type: Any.Type, _ value: PGValue) -> PGModelError {
    PGModelError(.typeMismatch, "a stored \(value.kindName) value cannot become \(type)")
}

extension String: PersistableAttribute {
    public static var attributeType: AttributeType { .string }
    public var pgValue: PGValue { .string(self) }
    public init(pgValue: PGValue) throws {
        guard case .string(let s) = pgValue else { throw mismatch(String.self, pgValue) }
        self = s
    }
}

extension Bool: PersistableAttribute {
    public static var attributeType: AttributeType { .bool }
    public var pgValue: PGValue { .bool(self) }
    public init(pgValue: PGValue) throws {
        guard case .bool(let b) = pgValue else { throw mismatch(Bool.self, pgValue) }
        self = b
    }
}

/// Integers share one implementation: stored as `.int`, range-checked on the way back.
public protocol _PersistableInteger: PersistableAttribute, FixedWidthInteger {}

extension _PersistableInteger {
    public var pgValue: PGValue { .int(Int64(self)) }
    public init(pgValue: PGValue) throws {
        guard case .int(let i) = pgValue, let v = Self(exactly: i) else { throw mismatch(Self.self, pgValue) }
        self = v
    }
}

extension Int: _PersistableInteger { public static var attributeType: AttributeType { .int64 } }
extension Int64: _PersistableInteger { public static var attributeType: AttributeType { .int64 } }
extension Int32: _PersistableInteger { public static var attributeType: AttributeType { .int32 } }
extension Int16: _PersistableInteger { public static var attributeType: AttributeType { .int16 } }
extension Int8: _PersistableInteger { public static var attributeType: AttributeType { .int16 } }
extension UInt8: _PersistableInteger { public static var attributeType: AttributeType { .int16 } }
extension UInt16: _PersistableInteger { public static var attributeType: AttributeType { .int32 } }
extension UInt32: _PersistableInteger { public static var attributeType: AttributeType { .int64 } }

extension Double: PersistableAttribute {
    public static var attributeType: AttributeType { .double }
    public var pgValue: PGValue { .double(self) }
    public init(pgValue: PGValue) throws {
        switch pgValue {
        case .double(let d): self = d
        case .int(let i): self = Double(i)
        default: throw mismatch(Double.self, pgValue)
        }
    }
}

extension Float: PersistableAttribute {
    public static var attributeType: AttributeType { .float }
    public var pgValue: PGValue { .double(Double(self)) }
    public init(pgValue: PGValue) throws {
        switch pgValue {
        case .double(let d): self = Float(d)
        case .int(let i): self = Float(i)
        default: throw mismatch(Float.self, pgValue)
        }
    }
}

extension Decimal: PersistableAttribute {
    public static var attributeType: AttributeType { .decimal }
    public var pgValue: PGValue { .decimal(self) }
    public init(pgValue: PGValue) throws {
        switch pgValue {
        case .decimal(let d): self = d
        case .int(let i): self = Decimal(i)
        default: throw mismatch(Decimal.self, pgValue)
        }
    }
}

extension Date: PersistableAttribute {
    public static var attributeType: AttributeType { .date }
    public var pgValue: PGValue { .date(self) }
    public init(pgValue: PGValue) throws {
        guard case .date(let d) = pgValue else { throw mismatch(Date.self, pgValue) }
        self = d
    }
}

extension UUID: PersistableAttribute {
    public static var attributeType: AttributeType { .uuid }
    public var pgValue: PGValue { .uuid(self) }
    public init(pgValue: PGValue) throws {
        guard case .uuid(let u) = pgValue else { throw mismatch(UUID.self, pgValue) }
        self = u
    }
}

extension Data: PersistableAttribute {
    public static var attributeType: AttributeType { .data }
    public var pgValue: PGValue { .data(self) }
    public init(pgValue: PGValue) throws {
        guard case .data(let d) = pgValue else { throw mismatch(Data.self, pgValue) }
        self = d
    }
}

extension URL: PersistableAttribute {
    public static var attributeType: AttributeType { .url }
    public var pgValue: PGValue { .string(absoluteString) }
    public init(pgValue: PGValue) throws {
        guard case .string(let s) = pgValue, let url = URL(string: s) else { throw mismatch(URL.self, pgValue) }
        self = url
    }
}

extension Optional: PersistableAttribute where Wrapped: PersistableAttribute {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptional: Bool { true }
    // A switch, not `map(\.pgValue)`: a key path in this generic context is built anew on every call.
    // Inlinable, both: specialized in the model's module, an optional property's read no longer looks up
    // `Optional<Wrapped>`'s metadata for every fetched row.
    @inlinable
    public var pgValue: PGValue {
        switch self {
        case .some(let wrapped): return wrapped.pgValue
        case .none: return .null
        }
    }
    @inlinable
    public init(pgValue: PGValue) throws {
        self = pgValue.isNull ? nil : try Wrapped(pgValue: pgValue)
    }
}

/// How an attribute's Swift value becomes a ``PGValue`` and back. One witness per attribute, built once
/// per schema from the property's static type, so the hot path never inspects types at run time.
public struct AttributeCodec<Value>: Sendable {
    public let attributeType: AttributeType
    public let isOptional: Bool
    /// The type has no storage of its own (see `_AttributeCodecs.codec(_:)`'s last overload).
    public let isUnsupported: Bool
    public let encode: @Sendable (Value) -> PGValue
    public let decode: @Sendable (PGValue) throws -> Value

    public init(attributeType: AttributeType, isOptional: Bool, isUnsupported: Bool = false,
                encode: @escaping @Sendable (Value) -> PGValue, decode: @escaping @Sendable (PGValue) throws -> Value) {
        self.attributeType = attributeType
        self.isOptional = isOptional
        self.isUnsupported = isUnsupported
        self.encode = encode
        self.decode = decode
    }
    /// What an attribute left out by `propertiesToFetch` holds until it is loaded: the decoded form of
    /// a neutral stored value (`nil`, `""`, `0`, …); nil when the type has none, so it is always fetched.
    public var placeholder: Value? { try? decode(PlaceholderValues.value(for: attributeType, isOptional: isOptional)) }

    /// The codec of a ``PersistableAttribute``. Inlinable, as the overloads below: specialized in the
    /// model's module, its closures capture no type metadata, so a generated `init(backingData:)` builds
    /// its codecs without allocating (it builds them for every fetched row).
    @inlinable
    public static func attribute(_: Value.Type = Value.self) -> AttributeCodec where Value: PersistableAttribute {
        AttributeCodec(attributeType: Value.attributeType, isOptional: Value.isOptional,
                       encode: { $0.pgValue }, decode: { try Value(pgValue: $0) })
    }

    /// The codec of an enum stored as its raw value.
    @inlinable
    public static func rawRepresentable(_: Value.Type = Value.self) -> AttributeCodec
    where Value: RawRepresentable & SendableMetatype, Value.RawValue: PersistableAttribute {
        AttributeCodec(attributeType: Value.RawValue.attributeType, isOptional: false,
                       encode: { $0.rawValue.pgValue },
                       decode: { stored in
                           let raw = try Value.RawValue(pgValue: stored)
                           guard let value = Value(rawValue: raw) else {
                               throw PGModelError(.typeMismatch, "a stored raw value is not a case of \(Value.self)")
                           }
                           return value
                       })
    }

    /// The codec of an optional enum stored as its raw value.
    @inlinable
    public static func optionalRawRepresentable<Wrapped>(_: Wrapped.Type = Wrapped.self) -> AttributeCodec<Wrapped?>
    where Wrapped: RawRepresentable & SendableMetatype, Wrapped.RawValue: PersistableAttribute {
        let inner = AttributeCodec<Wrapped>.rawRepresentable()
        return AttributeCodec<Wrapped?>(attributeType: inner.attributeType, isOptional: true,
                                        encode: { $0.map(inner.encode) ?? .null },
                                        decode: { $0.isNull ? nil : try inner.decode($0) })
    }
}

/// Overloads the macro-generated code calls; the compiler picks the codec from the property's type:
/// the most specific wins, so a `String` is a column of its own, a `String`-backed enum its raw value,
/// `[String]` a PostgreSQL array, any other `Codable` a `jsonb` document, and anything else must say how
/// with `@Attribute(.transformable(by:))`.
public enum _AttributeCodecs {
    @inlinable
    public static func codec<V: RawRepresentable & Codable & SendableMetatype>(_: V.Type) -> AttributeCodec<V> where V.RawValue: PersistableAttribute {
        .rawRepresentable()
    }
    @inlinable
    public static func codec<V: RawRepresentable & Codable & SendableMetatype>(_: V?.Type) -> AttributeCodec<V?> where V.RawValue: PersistableAttribute {
        AttributeCodec<V?>.optionalRawRepresentable(V.self)
    }
    public static func codec<V: Codable & SendableMetatype>(_: V.Type) -> AttributeCodec<V> { .json() }
    /// A set iterates in a per-process hash order; stored sorted, equal sets store equal documents.
    public static func codec<E: Codable & Comparable & SendableMetatype>(_: Set<E>.Type) -> AttributeCodec<Set<E>> {
        let json = AttributeCodec<[E]>.json()
        return AttributeCodec<Set<E>>(attributeType: .json, isOptional: false,
                                      encode: { json.encode($0.sorted()) },
                                      decode: { Set(try json.decode($0)) })
    }
    public static func codec<E: PersistableAttribute>(_: [E].Type) -> AttributeCodec<[E]> { .array() }
    public static func codec<E: PersistableAttribute>(_: [E]?.Type) -> AttributeCodec<[E]?> {
        let inner = AttributeCodec<[E]>.array()
        return AttributeCodec<[E]?>(attributeType: inner.attributeType, isOptional: true,
                                    encode: { $0.map(inner.encode) ?? .null },
                                    decode: { $0.isNull ? nil : try inner.decode($0) })
    }
    /// Types PGModel cannot store by themselves: only usable with `@Attribute(.transformable(by:))`,
    /// which replaces this codec; without it the container refuses the schema.
    public static func codec<V>(_: V.Type) -> AttributeCodec<V> { .unsupported() }

    @inlinable
    public static func codec<V: PersistableAttribute>(_: V.Type) -> AttributeCodec<V> { .attribute() }
    @inlinable
    public static func codec<V: RawRepresentable & SendableMetatype>(_: V.Type) -> AttributeCodec<V> where V.RawValue: PersistableAttribute {
        .rawRepresentable()
    }
    @inlinable
    public static func codec<V: RawRepresentable & SendableMetatype>(_: V?.Type) -> AttributeCodec<V?> where V.RawValue: PersistableAttribute {
        AttributeCodec<V?>.optionalRawRepresentable(V.self)
    }
}

/// Neutral stored values, one per column type, for attributes not fetched yet.
enum PlaceholderValues {
    static func value(for type: AttributeType, isOptional: Bool) -> PGValue {
        if isOptional { return .null }
        switch type {
        case .string, .url: return type == .url ? .string("about:blank") : .string("")
        case .bool: return .bool(false)
        case .int16, .int32, .int64: return .int(0)
        case .float, .double: return .double(0)
        case .decimal: return .decimal(0)
        case .date: return .date(Date(timeIntervalSince1970: 0))
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .data: return .data(Data())
        case .json: return .string("null")
        case .stringArray, .int64Array, .doubleArray, .boolArray: return .string("[]")
        }
    }
}

extension AttributeCodec {
    /// A Codable value as a `jsonb` document (keys sorted, so equal values store equal text); `nil` of an
    /// optional is SQL NULL. A `Set` or a dictionary with non-`String` keys *inside* the value encodes in
    /// hash order: give such a type an `encode(to:)` that sorts (a `Set` attribute itself is stored sorted).
    public static func json(_: Value.Type = Value.self) -> AttributeCodec where Value: Codable & SendableMetatype {
        AttributeCodec(attributeType: .json, isOptional: Value.self is any _OptionalMarker.Type,
                       encode: { value in
                           let encoder = JSONEncoder()
                           encoder.outputFormatting = [.sortedKeys]
                           encoder.dateEncodingStrategy = .iso8601
                           guard let data = try? encoder.encode(value) else { return .null }
                           let text = String(decoding: data, as: UTF8.self)
                           return text == "null" ? .null : .string(text)
                       },
                       decode: { stored in
                           let text: String
                           switch stored {
                           case .null: text = "null"
                           case .string(let s): text = s
                           default: throw PGModelError(.typeMismatch, "a stored \(stored.kindName) value cannot become \(Value.self)")
                           }
                           let decoder = JSONDecoder()
                           decoder.dateDecodingStrategy = .iso8601
                           do {
                               return try decoder.decode(Value.self, from: Data(text.utf8))
                           } catch {
                               throw PGModelError(.typeMismatch, "a stored document cannot be decoded as \(Value.self)")
                           }
                       })
    }

    /// An array of scalars as a PostgreSQL array; element types without an array column type
    /// (dates, UUIDs, decimals, data, URLs) are stored as a `jsonb` array.
    public static func array<E: PersistableAttribute>(_: E.Type = E.self) -> AttributeCodec<[E]> where Value == [E] {
        let type: AttributeType
        switch E.attributeType {
        case .string: type = .stringArray
        case .int16, .int32, .int64: type = .int64Array
        case .float, .double: type = .doubleArray
        case .bool: type = .boolArray
        default: return AttributeCodec<[E]>.json()
        }
        let json = AttributeCodec<[E]>.json()
        return AttributeCodec<[E]>(attributeType: type, isOptional: false, encode: { values in
            json.encode(values).isNull ? .string("[]") : json.encode(values)
        }, decode: json.decode)
    }

    /// The codec of a type PGModel cannot store unless `@Attribute(.transformable(by:))` says how.
    public static func unsupported(_: Value.Type = Value.self) -> AttributeCodec {
        // The name, not the metatype: a type PGModel cannot store may well have a metatype that is not
        // Sendable (an isolated conformance), and these closures are.
        let message = "\(Value.self) is not storable; use @Attribute(.transformable(by:)) or make it Codable"
        return AttributeCodec(attributeType: .data, isOptional: Value.self is any _OptionalMarker.Type, isUnsupported: true,
                              encode: { _ in .null },
                              decode: { _ in throw PGModelError(.typeMismatch, message) })
    }
}

/// Lets codecs tell whether a generic type is an Optional, and what it wraps.
public protocol _OptionalMarker {
    static var wrappedType: Any.Type { get }
}
extension Optional: _OptionalMarker {
    public static var wrappedType: Any.Type { Wrapped.self }
}
