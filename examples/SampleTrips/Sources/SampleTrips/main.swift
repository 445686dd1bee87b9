import Foundation
import PGModel

// SampleTrips on either store: postgres:// (the direct store) or pgmodel:// (the service, as a user).
// The store's URL comes from the environment, never the command line, because it may hold a password.
//
//   swift run SampleTrips                          # in memory, on a private throwaway cluster
//
//   SAMPLETRIPS_STORE=postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel swift run SampleTrips
//   SAMPLETRIPS_STORE=pgmodel://alice:secret@127.0.0.1:7433 swift run SampleTrips
//
// On the direct store its tables go to the PostgreSQL schema `sample_trips` unless the URL names one
// (`?schema=…`): its `Trip` is not the README tour's `Trip`, and two apps' tables of one name must not
// meet in one schema. Through the service, the service's `--schema` decides (examples/README.md).

// With neither variable set, an in-memory store: a private PostgreSQL cluster the process starts and
// removes (PostgreSQL's server programs must be installed; nothing needs to run).
let environment = ProcessInfo.processInfo.environment
let configuration: ModelConfiguration
if let text = environment["SAMPLETRIPS_STORE"] ?? environment["DATABASE_URL"] {
    guard let url = URL(string: text) else {
        FileHandle.standardError.write(Data("SAMPLETRIPS_STORE is not a URL: set it to a postgres:// or pgmodel:// URL\n".utf8))
        exit(2)
    }
    configuration = ModelConfiguration(url: withDefaultSchema(url))
} else {
    configuration = ModelConfiguration(isStoredInMemoryOnly: true)
}

do {
    let container = try ModelContainer(for: Trip.self, BusinessTrip.self, PersonalTrip.self, configurations: configuration)
    let context = ModelContext(container)
    context.author = "SampleTrips"
    print("store: \(configuration.isStoredInMemoryOnly ? "in-memory" : configuration.url.scheme ?? "?")\(schemaNote(configuration.url))")

    // Where history stands before this run: the session's "latest token" fetch.
    var latest = HistoryDescriptor<DefaultHistoryTransaction>()
    latest.sortBy = [SortDescriptor(\.transactionIdentifier, order: .reverse)]
    latest.fetchLimit = 1
    let tokenBefore = try context.fetchHistory(latest).first?.token

    // Each run's trips carry a tag of their own, so runs never collide.
    let tag = String(UUID().uuidString.prefix(8))
    let day: TimeInterval = 86_400
    let start = Date(timeIntervalSince1970: 1_780_000_000)
    let conference = BusinessTrip(name: "\(tag) WWDC", destination: "Cupertino", startDate: start,
                                  endDate: start + 5 * day)
    conference.perdiem = 150
    let family = PersonalTrip(name: "\(tag) Grandma", destination: "Oslo", startDate: start + 30 * day,
                              endDate: start + 37 * day, reason: .family)
    let retreat = PersonalTrip(name: "\(tag) Fjords", destination: "Bergen", startDate: start + 60 * day,
                               endDate: start + 64 * day, reason: .wellness)
    family.bucketList = [BucketListItem(title: "Vigeland park"), BucketListItem(title: "Ferry to Nesodden", hasReservation: true)]
    family.livingAccommodation = LivingAccommodation(address: "Karl Johans gate 1", placeName: "Grandma's")
    for trip in [conference, family, retreat] { context.insert(trip) }
    try context.save()
    print("inserted: 3 trips")
    // Other clients (another run, another user an admin sees) write history too: count only this run's rows.
    let mine: Set<PersistentIdentifier> = Set(([conference, family, retreat] as [Trip]).map(\.persistentModelID)
        + family.bucketList.map(\.persistentModelID) + [family.livingAccommodation?.persistentModelID].compactMap { $0 })

    // Deep fetch: every kind of trip of this run, by start date.
    let ours = #Predicate<Trip> { $0.name.starts(with: tag) }
    let all = try context.fetch(FetchDescriptor<Trip>(predicate: ours, sortBy: [SortDescriptor(\.startDate)]))
    print("trips: " + all.map { "\($0.name.dropFirst(tag.count + 1)) (\(type(of: $0)))" }.joined(separator: ", "))

    // The session's segmented control: only business trips.
    let business = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip }))
        .filter { $0.name.hasPrefix(tag) }
    print("business trips: \(business.count)")

    // Relationships come back through faults.
    let oslo = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Oslo" && $0.name.starts(with: tag) }))
    print("Oslo bucket list: \(oslo.first?.bucketList.map(\.title).sorted().joined(separator: ", ") ?? "-")")
    print("Oslo stay: \(oslo.first?.livingAccommodation?.placeName ?? "-")")

    // An update and a cascading delete.
    conference.perdiem = 175
    context.delete(retreat)
    try context.save()

    // A fresh context reads the business trip back from the store, its own property included.
    let reread = try ModelContext(container).fetch(FetchDescriptor<BusinessTrip>(predicate: #Predicate { $0.name.starts(with: tag) }))
    print("WWDC perdiem: \(reread.first?.perdiem ?? -1)")

    // What changed since the run began, from persistent history.
    let since = HistoryDescriptor<DefaultHistoryTransaction>(predicate: tokenBefore.map { token in
        #Predicate<DefaultHistoryTransaction> { $0.token > token && $0.author == "SampleTrips" }
    } ?? #Predicate<DefaultHistoryTransaction> { $0.author == "SampleTrips" })
    var inserts = 0, updates = 0, deletes = 0
    for transaction in try context.fetchHistory(since) {
        for change in transaction.changes where mine.contains(change.changedPersistentIdentifier) {
            switch change {
            case .insert: inserts += 1
            case .update: updates += 1
            case .delete: deletes += 1
            @unknown default: break
            }
        }
    }
    print("history: \(inserts) inserts, \(updates) updates, \(deletes) deletes")
} catch {
    FileHandle.standardError.write(Data("SampleTrips: \(error)\n".utf8))
    exit(1)
}

/// A direct-store URL with `schema=sample_trips` added when it names no schema.
func withDefaultSchema(_ url: URL) -> URL {
    guard url.scheme == "postgres" || url.scheme == "postgresql",
          var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
    var items = components.queryItems ?? []
    if items.contains(where: { $0.name == "schema" }) { return url }
    items.append(URLQueryItem(name: "schema", value: "sample_trips"))
    components.queryItems = items
    return components.url ?? url
}

/// ` (schema name)` for a direct-store URL, else nothing.
func schemaNote(_ url: URL) -> String {
    guard url.scheme == "postgres" || url.scheme == "postgresql" else { return "" }
    let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
    return items.first { $0.name == "schema" }?.value.map { " (schema \($0))" } ?? ""
}
