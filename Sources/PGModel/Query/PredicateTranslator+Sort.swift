import Foundation
@_spi(PGModelInternals) import PGModelCore

extension PredicateTranslator {
    /// Translates sort descriptors to sort keys, most significant first.
    ///
    /// Each descriptor must sort by one stored attribute of `Root`. A string comparator (`.localizedStandard`,
    /// `.lexical`, `.localized`) is accepted and sorts by the column's database collation.
    ///
    /// ```swift
    /// let keys = try translator.translate([SortDescriptor(\Trip.startDate, order: .reverse), SortDescriptor(\Trip.name)])
    /// // [SortKey("startDate", ascending: false), SortKey("name")]
    /// ```
    public func translate(_ sort: [SortDescriptor<Root>]) throws -> [SortKey] {
        try sort.map { descriptor in
            guard let keyPath = descriptor.keyPath else {
                throw PGModelError(
                    .unsupportedSort,
                    "PGModel cannot translate a SortDescriptor without a key path on \(entityName): sort by a stored attribute",
                    model: entityName)
            }
            // A stored attribute's own key path first: it is the usual sort key, and the other two forms
            // take a compound key path apart through its description, which a plain one never is.
            if let name = keyPathName(keyPath) {
                return SortKey(name, ascending: descriptor.order == .forward)
            }
            if let (name, type) = documentSortKey(keyPath) {
                return SortKey(name, ascending: descriptor.order == .forward, field: type)
            }
            guard let name = try relatedSortKey(keyPath) else {
                throw PGModelError(
                    .unsupportedSort,
                    "PGModel cannot sort \(entityName) by \(TranslationContext.keyPathDescription(keyPath)): only stored attributes of \(entityName) can be sort keys",
                    model: entityName, keyPath: TranslationContext.keyPathLiteral(keyPath))
            }
            return SortKey(name, ascending: descriptor.order == .forward)
        }
    }
}

extension PredicateTranslator {
    /// `\Track.album?.title` → `album.title`: a key path through to-one relationships to a stored attribute.
    ///
    /// Swift has no API to take a compound key path apart, so its components are read from its description and
    /// matched with the single-component key paths `@Model` records for each property; a key path that cannot be
    /// matched is not a sort key.
    func relatedSortKey(_ keyPath: AnyKeyPath) throws -> String? {
        guard let modelType, let steps = Self.components(of: keyPath, root: modelType), steps.count > 1 else { return nil }
        var type: any PersistentModel.Type = modelType
        var names: [String] = []
        for (index, step) in steps.enumerated() {
            let entity = ModelGraph.entity(for: type)
            guard let property = entity.propertyMetadata.first(where: { property in
                [property.keypath, property.declaredKeypath].contains { $0.map { Self.components(of: $0, root: type) == [step] } ?? false }
            }) else {
                return nil
            }
            names.append(property.name)
            if let relationship = property.relationship {
                if relationship.isToMany {
                    throw PGModelError(
                        .unsupportedSort,
                        "PGModel cannot sort \(entityName) by \(TranslationContext.keyPathDescription(keyPath)): `\(names.joined(separator: "."))` is a to-many relationship; sort keys follow only to-one relationships",
                        model: entityName, keyPath: TranslationContext.keyPathLiteral(keyPath))
                }
                type = relationship.destination
            } else if index != steps.count - 1 {
                return nil
            }
        }
        return names.joined(separator: ".")
    }

    /// `\Excursion.location?.latitude` → (`location.latitude`, `.double`): a key path into the stored fields
    /// of a Codable attribute of the fetched model.
    func documentSortKey(_ keyPath: AnyKeyPath) -> (String, AttributeType)? {
        guard let modelType, let steps = Self.components(of: keyPath, root: modelType), steps.count > 1 else { return nil }
        let entity = ModelGraph.entity(for: modelType)
        guard let property = entity.propertyMetadata.first(where: { property in
            [property.keypath, property.declaredKeypath].contains { $0.map { Self.components(of: $0, root: modelType) == [steps[0]] } ?? false }
        }), !property.isRelationship, property.attributeType == .json else { return nil }
        let fields = steps.dropFirst().map(String.init)
        guard fields.allSatisfy(Naming.isValidIdentifier) else { return nil }
        return (([property.name] + fields).joined(separator: "."), TranslationContext.fieldType(type(of: keyPath).valueType))
    }

    /// The components of `keyPath`'s description after its root type, without optional-chaining marks:
    /// `\Track.<computed 0x… (Optional<Album>)>?.<computed 0x… (String)>?` → the two `<computed …>` parts.
    static func components(of keyPath: AnyKeyPath, root: Any.Type) -> [Substring]? {
        let text = "\(keyPath)"
        let prefix = "\\\(String(describing: root))."
        guard text.hasPrefix(prefix) else { return nil }
        var rest = text.dropFirst(prefix.count)
        var components: [Substring] = []
        while !rest.isEmpty {
            var end = rest.startIndex
            if rest.first == "<" {
                var depth = 0
                while end < rest.endIndex {
                    let c = rest[end]
                    if c == "<" || c == "(" { depth += 1 }
                    if c == ">" || c == ")" { depth -= 1 }
                    end = rest.index(after: end)
                    if depth == 0 { break }
                }
                guard depth == 0 else { return nil }
            } else {
                while end < rest.endIndex, !".?!".contains(rest[end]) { end = rest.index(after: end) }
            }
            guard end > rest.startIndex else { return nil }
            components.append(rest[..<end])
            rest = rest[end...].drop { $0 == "?" || $0 == "!" }
            if rest.first == "." { rest = rest.dropFirst() } else if !rest.isEmpty { return nil }
        }
        return components
    }
}
