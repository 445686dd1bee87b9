import Foundation

/// What makes a trip acceptable, shared by creation and change: the API checks it before anything
/// reaches the store, so a bad value is a 400 naming the field rather than a database error.
///
/// ```swift
/// try TripRules.check(name: "Oslo", destination: "Oslo", startDate: start, endDate: end, budget: 700)
/// ```
enum TripRules {
    /// The longest name or destination the API accepts, in characters.
    static let maximumTextLength = 200

    /// Throws `invalid_input` for the first field that breaks a rule.
    static func check(name: String, destination: String, startDate: Date, endDate: Date, budget: Double) throws {
        try text(name, field: "name")
        try text(destination, field: "destination")
        guard endDate >= startDate else {
            throw APIError.invalidInput("endDate must not be before startDate")
        }
        guard budget.isFinite, budget >= 0 else {
            throw APIError.invalidInput("budget must be a number of zero or more")
        }
    }

    private static func text(_ value: String, field: String) throws {
        guard !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw APIError.invalidInput("\(field) must not be empty")
        }
        guard value.count <= maximumTextLength else {
            throw APIError.invalidInput("\(field) must be at most \(maximumTextLength) characters")
        }
    }
}
