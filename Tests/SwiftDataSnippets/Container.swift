// ModelContainer and ModelConfiguration as Apple's reference writes them.
import Foundation
import PGModel

enum SnippetSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [SnippetTrip.self, SnippetAccommodation.self] }
}

enum SnippetMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SnippetSchemaV1.self] }
    static var stages: [MigrationStage] { [] }
}

func snippetContainer() throws {
    let configuration = ModelConfiguration(isStoredInMemoryOnly: true)
    let container = try ModelContainer(for: Schema(versionedSchema: SnippetSchemaV1.self),
                                       migrationPlan: SnippetMigrationPlan.self, configurations: [configuration])
    print(container.migrationPlan as Any, container.schema.entities.count, container.configurations.count)
    let grouped = ModelConfiguration(groupContainer: .identifier("group.com.example.trips"), cloudKitDatabase: .none)
    print(grouped.groupAppContainerIdentifier ?? "", grouped.cloudKitContainerIdentifier ?? "none")
}
