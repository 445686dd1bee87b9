import Foundation
@_spi(PGModelInternals) import PGModel

/// The observed model: small rows, so the numbers are about observation, not row size.
@Model
final class BenchNote {
    var title: String
    var topic: String

    init(title: String, topic: String) {
        self.title = title
        self.topic = topic
    }
}
