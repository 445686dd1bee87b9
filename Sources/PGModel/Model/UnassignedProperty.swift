/// What a generated getter calls when a property of a subclass that inherits its initializers is read
/// before anything assigned it (`@_PersistedProperty(unassigned: true)`). There is no value of the
/// property's type to return: SwiftData stops the program here too, and so does this, with a message
/// that names the property and what to write instead. A save of such a model throws `type_mismatch`
/// before anything reads it.
///
/// ```swift
/// @Model class PersonalTrip: Trip { var reason: Reason }   // no initializer: Trip's are inherited
/// let trip = PersonalTrip(name: "Reunion", destination: "Lyon")
/// trip.reason = .family                                   // assign before reading
/// ```
public func _unassignedPropertyRead(_ key: String, of model: Any.Type) -> Never {
    let name = String(describing: model)
    preconditionFailure("""
        \(name).\(key) was read before it was assigned: \(name) declares no initializer, so an instance made \
        with an inherited initializer has no \(key) until you set it. Assign it first, give it a default value, \
        or write an initializer that sets it and calls super.init.
        """)
}
