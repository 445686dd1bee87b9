@_spi(PGModelInternals) extension EntityDescription {
    /// Checks what `#Index` asks of each index beyond naming known attributes: every group names at
    /// least one, and an rtree index covers only numeric and date attributes. `SchemaDescription.validate()`
    /// runs it; the `@Model` macro already refuses the cases it can see in the class body, so this is what
    /// catches the rest (inherited properties, type aliases, `.codable` storage, hand-written schemas).
    ///
    /// ```swift
    /// try EntityDescription(name: "Trip", attributes: [AttributeDescription(name: "name", type: .string)],
    ///                       indexes: [IndexDescription(["name"], kind: .rtree)]).validateIndexes()   // throws
    /// ```
    public func validateIndexes() throws {
        for index in indexes {
            guard !index.attributes.isEmpty else {
                throw PGModelError(.invalidSchema, "an index on \(name) names no attributes; list at least one in each index", model: name)
            }
            guard index.kind == .rtree else { continue }
            for attributeName in index.attributes {
                let what: String
                if let attribute = attribute(named: attributeName) {
                    if IndexDescription.rtreeSupports(attribute.type) { continue }
                    what = "a \(attribute.type.rawValue) attribute"
                } else {
                    what = "a relationship"
                }
                throw PGModelError(.invalidSchema,
                    "the rtree index on \(name) names '\(attributeName)', \(what); an rtree index (a PostgreSQL GiST index) covers numeric and date attributes only, so index '\(attributeName)' with .binary([\\.\(attributeName)]) instead",
                    model: name, keyPath: attributeName)
            }
        }
    }
}
