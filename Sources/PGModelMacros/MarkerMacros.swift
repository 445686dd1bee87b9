import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute(.unique)`: a marker. `@Model` copies its arguments into the property's schema metadata,
/// so the attribute itself adds nothing.
public struct AttributeMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// `@Transient`: a marker. `@Model` leaves the property out of the store.
public struct TransientMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}

/// `@Relationship(.cascade, inverse: \Album.tracks)`: a marker. `@Model` copies its arguments into the
/// property's schema metadata; the accessors are the same as any persisted property's.
public struct RelationshipMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
