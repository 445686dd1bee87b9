/// How one fetch's rows become models: decided by the fetch and passed down the calls that build them,
/// never kept on the context, so a model built later (a relationship's partner, a fault's row) is not
/// built under another fetch's rules.
///
/// ```swift
/// let materialization = RowMaterialization(isPartial: request.properties != nil)
/// let models = try rows.map { try typed($0, as: Trip.self, materialization) }
/// ```
struct RowMaterialization {
    /// The rows hold only the fetch's `propertiesToFetch`: the other attributes are faults, read from
    /// the store when first accessed.
    var isPartial = false
    /// No registered model can have these rows (a context that has registered nothing): each is built
    /// without looking it up first.
    var rowsAreUnregistered = false

    /// Complete rows, each looked up before it is built.
    static let standard = RowMaterialization()
}
