import SwiftSyntax

/// The access level of generated members: as visible as the declaration they serve, so a public
/// model's or actor's conformance members are usable from other modules.
enum GeneratedAccess {
    static func prefix(for modifiers: DeclModifierListSyntax) -> String {
        for modifier in modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}
