import Foundation
@_spi(PGModelInternals) import PGModel

/// The sharing suite's models: an expedition owns its waypoints (a to-many with an inverse, the key
/// on the child), each waypoint its checkpoints (two levels: shares are transitive), and its supplies
/// through a join table (a to-many without inverse). Markers point at waypoints without owning them.
enum SharingModels {
    @Model final class Expedition {
        @Attribute(.unique) var code: String
        var title: String
        @Relationship(deleteRule: .cascade, inverse: \Waypoint.expedition) var waypoints: [Waypoint] = []
        @Relationship(deleteRule: .cascade) var supplies: [Supply] = []

        init(code: String, title: String) {
            self.code = code
            self.title = title
        }
    }

    @Model final class Waypoint {
        var name: String
        var expedition: Expedition?
        @Relationship(deleteRule: .cascade, inverse: \Checkpoint.waypoint) var checkpoints: [Checkpoint] = []

        init(name: String, expedition: Expedition? = nil) {
            self.name = name
            self.expedition = expedition
        }
    }

    @Model final class Checkpoint {
        var label: String
        var waypoint: Waypoint?

        init(label: String, waypoint: Waypoint? = nil) {
            self.label = label
            self.waypoint = waypoint
        }
    }

    @Model final class Supply {
        var item: String

        init(item: String) { self.item = item }
    }

    @Model final class Marker {
        var note: String
        var waypoint: Waypoint?

        init(note: String, waypoint: Waypoint? = nil) {
            self.note = note
            self.waypoint = waypoint
        }
    }

    static let types: [any PersistentModel.Type] = [Expedition.self, Waypoint.self, Checkpoint.self, Supply.self, Marker.self]
}
