import SwiftSyntax

/// What can be told from a property's written type alone. Anything not recognisably wrong passes: a
/// named type is assumed to be a supported one, an enum with a raw value or a model (a to-one
/// relationship), an array is assumed to hold models (to-many), and the type checker rejects
/// the rest when the generated `_AttributeCodecs.codec(T.self)` call does not resolve.
enum AttributeTypeCheck {
    /// The type can never be stored; `fix` is an obvious replacement, when there is one.
    case unsupported(reason: String, fix: Fix?)
    case plausible

    /// Replace `old` (the whole type or a part of it, e.g. `UInt64` in `UInt64?`) with `new`.
    struct Fix {
        let old: TypeSyntax
        let new: TypeSyntax
    }

    static func check(_ type: TypeSyntax) -> AttributeTypeCheck {
        check(type, insideOptional: false)
    }

    private static func check(_ type: TypeSyntax, insideOptional: Bool) -> AttributeTypeCheck {
        if let optional = type.as(OptionalTypeSyntax.self) {
            return checkWrapped(optional.wrappedType, insideOptional: insideOptional)
        }
        if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            let replacement = TypeSyntax(OptionalTypeSyntax(wrappedType: iuo.wrappedType.trimmed))
            return .unsupported(
                reason: "implicitly unwrapped optionals are not stored; declare it as an Optional with '?'",
                fix: Fix(old: type, new: replacement)
            )
        }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return checkNamed(identifier.name.text, generic: identifier.genericArgumentClause, node: type, insideOptional: insideOptional)
        }
        if let member = type.as(MemberTypeSyntax.self) {
            // `Swift.UInt` is `UInt`; any other qualified name (`Foundation.Date`, `Trip.Kind`) is plausible.
            if member.baseType.as(IdentifierTypeSyntax.self)?.name.text == "Swift" {
                return checkNamed(member.name.text, generic: member.genericArgumentClause, node: type, insideOptional: insideOptional)
            }
            return .plausible
        }
        if type.is(ArrayTypeSyntax.self) {
            // `[Track]` is a to-many relationship when `Track` is a model; the codec overloads decide.
            return .plausible
        }
        if type.is(DictionaryTypeSyntax.self) {
            return .unsupported(reason: "dictionaries have no column type", fix: nil)
        }
        if let tuple = type.as(TupleTypeSyntax.self) {
            // `(Int)` is just `Int` in parentheses.
            if tuple.elements.count == 1, let only = tuple.elements.first, only.firstName == nil {
                return check(only.type, insideOptional: insideOptional)
            }
            return .unsupported(reason: "tuples have no column type; store each element in its own property", fix: nil)
        }
        if type.is(FunctionTypeSyntax.self) {
            return .unsupported(reason: "functions and closures cannot be stored", fix: nil)
        }
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return check(attributed.baseType, insideOptional: insideOptional)
        }
        if let existential = type.as(SomeOrAnyTypeSyntax.self) {
            let keyword = existential.someOrAnySpecifier.text
            return .unsupported(reason: "'\(keyword)' types do not name one concrete type to store", fix: nil)
        }
        if type.is(CompositionTypeSyntax.self) {
            return .unsupported(reason: "protocol compositions do not name one concrete type to store", fix: nil)
        }
        if type.is(MetatypeTypeSyntax.self) {
            return .unsupported(reason: "metatypes cannot be stored", fix: nil)
        }
        return .plausible
    }

    private static func checkWrapped(_ wrapped: TypeSyntax, insideOptional: Bool) -> AttributeTypeCheck {
        if insideOptional || isOptional(wrapped) {
            // A column holds NULL for nil; `.some(nil)` would read back as nil.
            return .unsupported(reason: "nested optionals cannot be told apart from nil in a nullable column", fix: nil)
        }
        return check(wrapped, insideOptional: true)
    }

    private static func checkNamed(
        _ name: String, generic: GenericArgumentClauseSyntax?, node: TypeSyntax, insideOptional: Bool
    ) -> AttributeTypeCheck {
        func use(_ replacement: String) -> Fix {
            Fix(old: node, new: TypeSyntax(IdentifierTypeSyntax(name: .identifier(replacement))))
        }
        if let generic {
            switch name {
            case "Optional":
                guard generic.arguments.count == 1, let argument = generic.arguments.first,
                      let wrapped = argument.argument.as(TypeSyntax.self)
                else { return .plausible }
                return checkWrapped(wrapped, insideOptional: insideOptional)
            case "Array":
                return .plausible
            case "ContiguousArray", "ArraySlice":
                let element = generic.arguments.first?.argument.as(TypeSyntax.self)
                return .unsupported(
                    reason: "to-many relationships are stored as arrays; declare it as an Array",
                    fix: element.map { Fix(old: node, new: TypeSyntax(ArrayTypeSyntax(element: $0.trimmed))) }
                )
            case "Set":
                // SwiftData's to-many relationships are arrays, and the codec overloads only cover those.
                let element = generic.arguments.first?.argument.as(TypeSyntax.self)
                return .unsupported(
                    reason: "sets are not stored; declare a to-many relationship as an array of models",
                    fix: element.map { Fix(old: node, new: TypeSyntax(ArrayTypeSyntax(element: $0.trimmed))) }
                )
            case "Dictionary":
                return .unsupported(reason: "dictionaries have no column type", fix: nil)
            default:
                return .plausible
            }
        }
        switch name {
        case "UInt":
            return .unsupported(
                reason: "PostgreSQL has no unsigned 64-bit integer type; use Int (or UInt32 when the values fit)",
                fix: use("Int")
            )
        case "UInt64":
            return .unsupported(
                reason: "PostgreSQL has no unsigned 64-bit integer type; use Int64 (or UInt32 when the values fit)",
                fix: use("Int64")
            )
        case "Character":
            return .unsupported(
                reason: "a Character is stored as a String",
                fix: use("String")
            )
        case "Any", "AnyObject", "AnyClass", "AnyHashable":
            return .unsupported(reason: "'\(name)' does not name one concrete type to store", fix: nil)
        case "Void", "Never":
            return .unsupported(reason: "'\(name)' has no values to store", fix: nil)
        default:
            return .plausible
        }
    }

    private static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first {
            return isOptional(only.type)
        }
        return false
    }
}
