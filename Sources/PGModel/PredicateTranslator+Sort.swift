import Foundation
import PGModelCore

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
            guard let name = keyPathName(keyPath) else {
                throw PGModelError(
                    .unsupportedSort,
                    "PGModel cannot sort \(entityName) by \(TranslationContext.keyPathDescription(keyPath)): only stored attributes of \(entityName) can be sort keys",
                    model: entityName, keyPath: TranslationContext.keyPathLiteral(keyPath))
            }
            return SortKey(name, ascending: descriptor.order == .forward)
        }
    }
}
