/// Fetched models grouped into sections by a key path: a random-access collection of
/// ``ResultsSection``s in order of first appearance in the sorted results.
///
/// ```swift
/// let sections = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]), sectionBy: \.destination)
/// for section in sections { print(section.id, section.count) }
/// let paris = sections[sectionTitle: "Paris"]
/// ```
public struct SectionedResults<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection {
    public let sections: [ResultsSection<Element, SectionTitle>]
    private let index: [SectionTitle: Int]

    /// Groups `models` by `title`; a title seen again later joins its first section, so sections
    /// are unique even when the sort does not keep them contiguous.
    init(_ models: [Element], title: (Element) -> SectionTitle) {
        var titles: [SectionTitle] = []
        var members: [[Element]] = []
        var index: [SectionTitle: Int] = [:]
        for model in models {
            let key = title(model)
            if let i = index[key] {
                members[i].append(model)
            } else {
                index[key] = titles.count
                titles.append(key)
                members.append([model])
            }
        }
        self.sections = zip(titles, members).map { ResultsSection(title: $0, elements: $1) }
        self.index = index
    }

    /// No sections.
    public init() {
        sections = []
        index = [:]
    }

    public var startIndex: Int { sections.startIndex }
    public var endIndex: Int { sections.endIndex }
    public subscript(position: Int) -> ResultsSection<Element, SectionTitle> { sections[position] }

    /// Every section's title, in section order.
    ///
    /// ```swift
    /// sections.sectionTitles   // ["Oslo", "Paris"]
    /// ```
    public var sectionTitles: [SectionTitle] { sections.map(\.title) }

    /// The position of the section titled `sectionTitle`, in O(1); nil when there is none.
    ///
    /// ```swift
    /// if let i = sections.index(ofSectionTitled: "Paris") { print(sections[i].count) }
    /// ```
    public func index(ofSectionTitled sectionTitle: SectionTitle) -> Int? {
        index[sectionTitle]
    }

    /// The section titled `sectionTitle`, in O(1); nil when there is none.
    public subscript(sectionTitle sectionTitle: SectionTitle) -> ResultsSection<Element, SectionTitle>? {
        index[sectionTitle].map { sections[$0] }
    }
}

/// The models of one section: a random-access collection sharing one ``title`` (also its ``id``).
///
/// ```swift
/// for section in sections { print(section.title, section.map(\.name)) }
/// ```
public struct ResultsSection<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection, Identifiable {
    /// The value of the `sectionBy` key path shared by this section's models (`""` for nil).
    public let title: SectionTitle
    public let elements: [Element]

    public var id: SectionTitle { title }
    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> Element { elements[position] }
}

extension SectionedResults: @unchecked Sendable where Element: Sendable {}
