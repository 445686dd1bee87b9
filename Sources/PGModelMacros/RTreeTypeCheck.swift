import SwiftSyntax

/// Whether an `#Index` `.rtree` group can cover a property, from what the class body says about it. Like
/// ``AttributeTypeCheck`` it refuses only what is recognisably wrong: a named type it does not know (a
/// type alias of `Double`, an enum with an `Int` raw value, a model) passes, and the schema's validation
/// checks the stored type when the container is created.
enum RTreeTypeCheck: Equatable {
    /// A number or a date: GiST orders it through `btree_gist`.
    case supported
    /// Never indexable by an R-tree; `what` describes the property for the diagnostic ("a String").
    case unsupported(what: String)
    /// Not known from the syntax alone.
    case unknown

    /// Types whose column (`smallint` … `bigint`, `real`, `double precision`, `numeric`, `timestamptz`)
    /// `btree_gist` gives GiST operator classes for.
    static let numericTypes: Set<String> = [
        "Int", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32",
        "Double", "Float", "Decimal", "Date", "TimeInterval",
    ]

    /// Stored types an R-tree has no sensible order for: text, booleans, identifiers, bytes.
    static let unsupportedTypes: Set<String> = ["String", "Substring", "Character", "Bool", "UUID", "Data", "URL"]

    static func check(_ property: PersistedProperty) -> RTreeTypeCheck {
        if case .relationship = property.metadata { return .unsupported(what: "a relationship") }
        return check(property.type)
    }

    private static func check(_ type: TypeSyntax) -> RTreeTypeCheck {
        if let optional = type.as(OptionalTypeSyntax.self) { return check(optional.wrappedType) }
        if type.is(ArrayTypeSyntax.self) { return .unsupported(what: "an array") }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            if let generic = identifier.genericArgumentClause {
                switch identifier.name.text {
                case "Optional":
                    guard generic.arguments.count == 1, let wrapped = generic.arguments.first?.argument.as(TypeSyntax.self) else { return .unknown }
                    return check(wrapped)
                case "Array":
                    return .unsupported(what: "an array")
                default:
                    return .unknown
                }
            }
            return named(identifier.name.text)
        }
        if let member = type.as(MemberTypeSyntax.self), member.genericArgumentClause == nil,
           let base = member.baseType.as(IdentifierTypeSyntax.self)?.name.text, base == "Swift" || base == "Foundation" {
            return named(member.name.text)
        }
        return .unknown
    }

    private static func named(_ name: String) -> RTreeTypeCheck {
        if numericTypes.contains(name) { return .supported }
        if unsupportedTypes.contains(name) { return .unsupported(what: "a \(name)") }
        return .unknown
    }
}
