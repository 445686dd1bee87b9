/// Lets a ``ResultsObserver``'s `results` be read as an array wherever one is expected, as the seed
/// sessions do (`calculateBounds(trips: resultsObserver.results)` with a `[Trip]` parameter), while
/// `results` is Apple's `FetchResultsCollection` everywhere else. Not meant to be adopted by other types.
///
/// ```swift
/// func names(_ trips: [Trip]) -> [String] { trips.map(\.name) }
/// print(names(observer.results))   // the array form
/// let all = observer.results        // FetchResultsCollection<Trip>
/// ```
public protocol ResultsArrayConvertible: AnyObject {
    /// The model type of the results.
    associatedtype ResultsElement
    /// The results as an array; read through `results` where an array is expected.
    var _resultsArray: [ResultsElement] { get }
}

extension ResultsArrayConvertible {
    /// The current results as an array: chosen by the compiler where an array is expected.
    ///
    /// ```swift
    /// let trips: [Trip] = observer.results
    /// ```
    public var results: [ResultsElement] { _resultsArray }
}

extension ResultsObserver: ResultsArrayConvertible {
    /// The current results as an array (the same models as ``results``, registering the same observation).
    ///
    /// ```swift
    /// let trips: [Trip] = observer._resultsArray
    /// ```
    public var _resultsArray: [Element] {
        trackResultsRead()
        return storedModels
    }
}
