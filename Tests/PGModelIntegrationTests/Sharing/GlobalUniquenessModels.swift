import Foundation
@_spi(PGModelInternals) import PGModel

/// Models with uniqueness across all users beside uniqueness per owner: a member's handle is unique among
/// every user's members, its nickname among its owner's; a post's slug among everyone's, its code among
/// its owner's. A member owns its posts (`.cascade`), so a share of a member covers them.
enum GlobalUniquenessModels {
    @Model final class Member {
        @Attribute(.globallyUnique) var handle: String
        @Attribute(.unique) var nickname: String
        var bio: String
        @Relationship(deleteRule: .cascade, inverse: \Post.member) var posts: [Post] = []

        init(handle: String, nickname: String, bio: String) {
            self.handle = handle
            self.nickname = nickname
            self.bio = bio
        }
    }

    @Model final class Post {
        #Unique<Post>([\.slug], scope: .allUsers)
        var slug: String?
        @Attribute(.unique) var code: String?
        var title: String
        var member: Member?

        init(title: String, slug: String? = nil, code: String? = nil) {
            self.title = title
            self.slug = slug
            self.code = code
        }
    }

    static let types: [any PersistentModel.Type] = [Member.self, Post.self]
}

/// A profile whose handle is unique per owner (V1), then across all users (V2), then per owner again (V3).
enum ProfileSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [ProfileSchemaV1.Profile.self] }

    @Model final class Profile {
        @Attribute(.unique) var handle: String
        var bio: String
        init(handle: String, bio: String) { self.handle = handle; self.bio = bio }
    }
}

enum ProfileSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [ProfileSchemaV2.Profile.self] }

    @Model final class Profile {
        @Attribute(.globallyUnique) var handle: String
        var bio: String
        init(handle: String, bio: String) { self.handle = handle; self.bio = bio }
    }
}

enum ProfileSchemaV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [ProfileSchemaV3.Profile.self] }

    @Model final class Profile {
        #Unique<Profile>([\.handle])
        var handle: String
        var bio: String
        init(handle: String, bio: String) { self.handle = handle; self.bio = bio }
    }
}

enum ProfileMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ProfileSchemaV1.self, ProfileSchemaV2.self, ProfileSchemaV3.self] }
    static var stages: [MigrationStage] {
        [.lightweight(fromVersion: ProfileSchemaV1.self, toVersion: ProfileSchemaV2.self),
         .lightweight(fromVersion: ProfileSchemaV2.self, toVersion: ProfileSchemaV3.self)]
    }
}
