import Foundation

@_spi(PGModelInternals) extension PGValue {
    /// Throws `invalid_field` when PostgreSQL (or its driver) cannot take this value as a bind: a
    /// non-finite double or decimal, a date whose microseconds since 2000 overflow an Int64, text with a
    /// NUL character. Every request value passes here before any SQL is rendered. Messages name the
    /// model and key path, never the value.
    ///
    /// ```swift
    /// try PGValue.double(.nan).validateBindable(model: "Trip", keyPath: "perdiem")   // throws invalid_field
    /// ```
    public func validateBindable(model: String?, keyPath: String?) throws {
        // Only an error needs the text: a bulk save validates every value of every row.
        var place: String { keyPath.map { " for '\($0)'" } ?? "" }
        switch self {
        case .double(let d) where !d.isFinite:
            throw PGModelError(.invalidField, "a number\(place) must be finite", model: model, keyPath: keyPath)
        case .decimal(let d) where !d.isFinite:
            throw PGModelError(.invalidField, "a decimal\(place) must be a finite number", model: model, keyPath: keyPath)
        case .date(let date) where !RequestLimits.bindableDateSeconds.contains(date.timeIntervalSince1970):
            throw PGModelError(.invalidField, "a date\(place) must lie within 290,000 years of 2000", model: model, keyPath: keyPath)
        case .string(let text) where text.utf8.contains(0):
            // PostgreSQL's text cannot hold NUL; it would fail the statement with an encoding error.
            throw PGModelError(.invalidField, "a string\(place) contains a NUL character, which PostgreSQL text cannot hold",
                               model: model, keyPath: keyPath)
        default:
            return
        }
    }
}
