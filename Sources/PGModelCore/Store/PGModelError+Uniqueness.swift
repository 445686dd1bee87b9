/// The one answer to a write that meets a value held under a uniqueness constraint across all users.
@_spi(PGModelInternals) extension PGModelError {
    /// `unique_violation` naming the model and the attributes of a constraint across all users, and
    /// nothing else: whichever row holds the values (the user's own, another user's, one shared with
    /// the user, one they cannot see) the error is this one, so it tells only that they are taken.
    ///
    /// ```swift
    /// throw PGModelError.valueTaken(model: "Member", attributes: ["handle"])
    /// // unique_violation: Member.handle is taken: its value is unique across all users
    /// ```
    public static func valueTaken(model: String, attributes: [String]) -> PGModelError {
        PGModelError(.uniqueViolation, valueTakenMessage(model: model, keyPath: attributes.joined(separator: ",")),
                     model: model, keyPath: attributes.joined(separator: ","), sqlState: "23505")
    }

    /// Whether this is a ``valueTaken(model:attributes:)`` answer: what the service counts as a probe of
    /// other users' values.
    ///
    /// ```swift
    /// if error.isValueTaken { probes.recordFailure(…) }
    /// ```
    public var isValueTaken: Bool {
        guard code == .uniqueViolation, let model, let keyPath else { return false }
        return message == Self.valueTakenMessage(model: model, keyPath: keyPath)
    }

    /// The message of ``valueTaken(model:attributes:)``; `keyPath` is the attribute names joined by commas.
    public static func valueTakenMessage(model: String, keyPath: String) -> String {
        let names = keyPath.split(separator: ",").map { "\(model).\($0)" }
        if names.count == 1 { return "\(names[0]) is taken: its value is unique across all users" }
        return "\(names.joined(separator: ", ")) are taken: their values are unique together across all users"
    }
}
