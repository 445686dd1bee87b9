/// The bounds every fetch, save and history request is checked against before any SQL is rendered
/// (`FetchRequest.validate(against:)` and its siblings). They are far above what an application sends and
/// far below what would exhaust a stack, PostgreSQL's bind limit or the renderer's memory; the line
/// protocol documents them in docs/PROTOCOL.md §8.
///
/// ```swift
/// guard ids.count <= RequestLimits.maximumListCount else { … }
/// ```
@_spi(PGModelInternals) public enum RequestLimits {
    /// How deep an expression (or history filter) may nest, counted in operators. The line protocol's
    /// decoder refuses deeper JSON before it builds the IR; an IR built in-process is checked the same way.
    public static let maximumExpressionDepth = QueryExpression.maximumDecodingDepth

    /// The most elements of any list in a request that becomes SQL: a captured array (`in`), operands of
    /// `and`/`or`, ids, related ids, property names, entity and author lists of history.
    public static let maximumListCount = 30_000

    /// The most sort keys of one fetch.
    public static let maximumSortKeys = 64

    /// The most steps of a dotted key path (`trip.owner.name`) or of a document field path.
    public static let maximumPathSteps = 32

    /// PostgreSQL's limit on the parameters of one statement (its wire format counts them in 16 bits).
    public static let maximumBindCount = 65_535

    /// The range of a date PostgreSQL's driver can bind: microseconds since 2000-01-01 must fit an Int64
    /// (about 292,000 years either side); PostgresNIO traps beyond it.
    public static let bindableDateSeconds: ClosedRange<Double> = -9.2e12...9.2e12
}
