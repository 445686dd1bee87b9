import Foundation

extension PersistentIdentifier {
    /// The stable identity of a model within its store: in PGModel, the row's UUID primary key. It
    /// encodes as that UUID's string, as the identifier's `id` always has.
    ///
    /// ```swift
    /// var seen = Set<PersistentIdentifier.ID>()
    /// seen.insert(trip.persistentModelID.id)
    /// ```
    public struct ID: Hashable, Codable, Sendable, CustomStringConvertible {
        /// The row's primary key.
        let uuid: UUID

        init(uuid: UUID) { self.uuid = uuid }

        public init(from decoder: any Decoder) throws {
            uuid = try decoder.singleValueContainer().decode(UUID.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(uuid)
        }

        public var description: String { uuid.uuidString.lowercased() }
    }
}
