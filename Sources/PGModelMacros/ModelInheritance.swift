import SwiftSyntax

/// Where a `@Model` class sits in a model class hierarchy, which decides the shape of what `@Model`
/// generates.
///
/// ```swift
/// @Model final class Note { … }              // .root(isFinal: true):  static members, as before
/// @Model class Trip { … }                    // .root(isFinal: false): overridable `class var`s
/// @Model class BusinessTrip: Trip { … }      // .subclass(of: Trip):   `override class var`s, `super.init`
/// ```
///
/// A macro sees only syntax, so whether the first inherited type is a class or a protocol is a guess:
/// the class is taken for a model *subclass* when its first inherited type is not a well-known
/// protocol (`Codable`, `Encodable`, `Decodable`, `Hashable`, `Equatable`, `Identifiable`, `Sendable`,
/// `Comparable`, `CustomStringConvertible`, `CustomDebugStringConvertible`, `ObservableObject`,
/// `Observable`, `PersistentModel`, `AnyObject`, `CaseIterable`, `RawRepresentable`) and its name does
/// not end in `Protocol`. Swift requires a superclass to be listed first, so a class that lists only
/// protocols is never mistaken for a subclass unless its first protocol is one of the user's own.
///
/// The compiler's own answer corrects that case: when the `@Model` declaration lists
/// `conformances: PersistentModel, Observable` on its member role (SE-0407), the member role is passed
/// the conformances the class does not have yet, and a class that still needs `PersistentModel` cannot
/// inherit from a model, whatever its first inherited type is. Without that list the member role is
/// passed nothing and the name heuristic alone decides.
enum ModelInheritance: Equatable {
    /// The top of a hierarchy (or a model with none). A non-final root's subclasses override its members.
    case root(isFinal: Bool)
    /// A model that inherits from another model: it adds its own properties to its superclass's.
    case subclass(of: String)

    /// Protocols a model class commonly lists first; any other first inherited type is taken for a superclass.
    static let knownProtocols: Set<String> = [
        "Codable", "Encodable", "Decodable", "Hashable", "Equatable", "Identifiable", "Sendable",
        "Comparable", "CustomStringConvertible", "CustomDebugStringConvertible", "ObservableObject",
        "Observable", "PersistentModel", "AnyObject", "CaseIterable", "RawRepresentable",
    ]

    /// - Parameter missingConformances: the protocols the compiler says the class does not conform to
    ///   yet (the member and extension roles' `conformingTo`).
    init(of model: ClassDeclSyntax, missingConformances: [TypeSyntax]) {
        let needsPersistentModel = missingConformances.contains { Self.lastComponent(of: $0) == "PersistentModel" }
        if !needsPersistentModel,
           let first = model.inheritanceClause?.inheritedTypes.first?.type,
           !Self.isKnownProtocol(first) {
            self = .subclass(of: first.trimmedDescription)
        } else {
            self = .root(isFinal: model.modifiers.contains { $0.name.tokenKind == .keyword(.final) })
        }
    }

    var isSubclass: Bool {
        if case .subclass = self { return true }
        return false
    }

    private static func isKnownProtocol(_ type: TypeSyntax) -> Bool {
        // `any Foo` / `Foo & Bar` / `@unchecked Sendable` can only be protocols.
        if type.is(SomeOrAnyTypeSyntax.self) || type.is(CompositionTypeSyntax.self) || type.is(AttributedTypeSyntax.self) {
            return true
        }
        let name = lastComponent(of: type)
        return knownProtocols.contains(name) || name.hasSuffix("Protocol")
    }

    /// `PersistentModel` for both `PersistentModel` and `PGModel.PersistentModel`.
    static func lastComponent(of type: TypeSyntax) -> String {
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }
}
