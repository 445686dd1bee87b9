@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension SQLRenderer {
    /// The answer to a write PostgreSQL refused under the uniqueness constraint named `constraint`, when it
    /// is one across all users: ``PGModelError/valueTaken(model:attributes:)`` naming the model (`model`
    /// when its class has the constraint) and the attributes; `nil` for any other constraint.
    ///
    /// ```swift
    /// renderer.valueTaken(constraint: "member_handle_all_users_key", model: "Member")
    /// // unique_violation: Member.handle is taken: its value is unique across all users
    /// ```
    public func valueTaken(constraint: String, model: String?) -> PGModelError? {
        var entities = schema.entities
        // The class of the row written first: its subclass's name is what the app wrote.
        if let model, let i = entities.firstIndex(where: { $0.name == model }) { entities.swapAt(0, i) }
        for entity in entities {
            guard let root = schema.rootEntity(of: entity.name) else { continue }
            for group in entity.uniquenessConstraints where group.scope == .allUsers {
                let columns = group.attributes.compactMap { constraintColumn($0, of: entity) }
                if globalUniquenessConstraintName(root.tableName, columns) == constraint {
                    return .valueTaken(model: entity.name, attributes: group.attributes)
                }
            }
        }
        return nil
    }

    /// Whether rows of `entity` (its own and inherited constraints) have a uniqueness constraint across all users.
    ///
    /// ```swift
    /// renderer.hasGlobalUniqueness(try renderer.entity("Member"))   // true: @Attribute(.globallyUnique) var handle
    /// ```
    public func hasGlobalUniqueness(_ entity: EntityDescription) -> Bool {
        uniquenessConstraints(of: entity).contains { $0.scope == .allUsers }
    }

    /// The name of the constraint across all users on `columns` of `tableName`: `<table>_<columns>_all_users_key`.
    func globalUniquenessConstraintName(_ tableName: String, _ columns: [String]) -> String {
        objectName(tableName, columns, suffix: "all_users_key")
    }
}
