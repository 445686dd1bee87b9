/// One uniqueness constraint of an entity: the attributes (or to-one relationships) whose values are
/// unique together, and among whose rows.
///
/// ```swift
/// let perOwner: UniquenessConstraintDescription = ["name", "startDate"]            // #Unique<Trip>([\.name, \.startDate])
/// let global = UniquenessConstraintDescription(["handle"], scope: .allUsers)      // @Attribute(.globallyUnique)
/// ```
@_spi(PGModelInternals) public struct UniquenessConstraintDescription: Codable, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The attribute (or to-one relationship) names, in constraint order.
    public var attributes: [String]
    /// Whose rows the values are compared with.
    public var scope: UniquenessScope

    public init(_ attributes: [String], scope: UniquenessScope = .owner) {
        self.attributes = attributes
        self.scope = scope
    }

    public init(arrayLiteral attributes: String...) {
        self.init(attributes)
    }

    private enum CodingKeys: String, CodingKey {
        case attributes, scope
    }

    public init(from decoder: any Decoder) throws {
        // The original form: an array of names is a constraint per owner.
        if let names = try? decoder.singleValueContainer().decode([String].self) {
            self.init(names)
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try c.decode([String].self, forKey: .attributes),
                  scope: try c.decodeIfPresent(UniquenessScope.self, forKey: .scope) ?? .owner)
    }

    public func encode(to encoder: any Encoder) throws {
        // Constraints per owner keep the original form, so an unchanged schema encodes (and fingerprints)
        // as it did, and a server that predates scopes reads it.
        if scope == .owner {
            var c = encoder.singleValueContainer()
            try c.encode(attributes)
            return
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(scope, forKey: .scope)
    }
}

/// Among whose rows a uniqueness constraint compares values.
///
/// ```swift
/// #Unique<Member>([\.handle], scope: .allUsers)   // no two users' members share a handle
/// #Unique<Member>([\.nickname])                   // .owner: each user's own members
/// ```
public enum UniquenessScope: String, Codable, Hashable, Sendable, CaseIterable {
    /// Each owner's rows, as if every user had a SwiftData store of their own: what `@Attribute(.unique)`
    /// and `#Unique` without a scope mean. An insert upserts into the user's own row; nobody learns
    /// anything about other users' values. The direct store's rows (no owner) are unique among themselves.
    case owner
    /// Every row of the table, whoever owns it: user names, handles, slugs (`@Attribute(.globallyUnique)`,
    /// `#Unique(…, scope: .allUsers)`). An insert upserts only into the user's own row (or, on the direct
    /// store, a row without an owner); a value another user holds is `unique_violation`, which tells the
    /// user only that the value is taken.
    case allUsers
}
