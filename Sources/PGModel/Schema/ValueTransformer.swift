import Foundation

/// Converts a value to `Data` and back for `@Attribute(.transformable(by:))`. Linux Foundation has no
/// `ValueTransformer`, so PGModel provides one with the same shape: subclass it and override the two
/// transformations.
///
/// ```swift
/// final class ColorTransformer: ValueTransformer {
///     override func transformedValue(_ value: Any?) -> Any? { (value as? Color).map { Data($0.hex.utf8) } }
///     override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data).map { Color(hex: String(decoding: $0, as: UTF8.self)) } }
/// }
/// ```
open class ValueTransformer {
    public required init() {}
    /// Whether `reverseTransformedValue(_:)` is supported; PGModel needs it to read values back.
    open class func allowsReverseTransformation() -> Bool { true }
    /// The class of the stored form, as Foundation's transformers declare it. PGModel stores `Data`
    /// whatever this says; it exists so transformers written for SwiftData compile unchanged.
    open class func transformedValueClass() -> AnyClass { NSData.self }
    /// The stored form (`Data`) of `value`.
    open func transformedValue(_ value: Any?) -> Any? { value }
    /// The value of the stored form `value`.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }
}

/// A transformer type, hashable so attribute options stay value types.
struct TransformerReference: Hashable, @unchecked Sendable {
    // @unchecked: a class metatype, immutable.
    let type: ValueTransformer.Type
    static func == (l: Self, r: Self) -> Bool { ObjectIdentifier(l.type) == ObjectIdentifier(r.type) }
    func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(type)) }
}
