import ArgumentParser
import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A record named on the command line.
enum RecordArgument {
    static func parse(entity: String, id: String) throws -> RowReference {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a record id (a UUID)") }
        return RowReference(entity: entity, id: uuid)
    }
}
