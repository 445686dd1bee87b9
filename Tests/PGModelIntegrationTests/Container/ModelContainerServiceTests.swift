import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import ServiceLifecycle
import Testing
import PGModelTesting

/// `ModelContainerService`: a container's lifetime in a `ServiceGroup`. It runs until graceful shutdown
/// or cancellation, then closes the container, whose calls then fail with `connection_failed`.
@Suite("ModelContainerService")
struct ModelContainerServiceTests {
    nonisolated(unsafe) static let types: [any PersistentModel.Type] = [RequestNote.self]

    /// A service that does nothing until shutdown, standing in for an HTTP server.
    struct IdleService: Service {
        func run() async throws { try? await gracefulShutdown() }
    }

    static func expectClosed(_ container: ModelContainer) async {
        let error = await #expect(throws: PGModelError.self) {
            _ = try await ModelContext(container).fetchCountAsync(FetchDescriptor<RequestNote>())
        }
        #expect(error?.code == .connectionFailed)
    }

    @Test("graceful shutdown of the group closes the container, after the services listed after it", arguments: StoreKind.allCases)
    func gracefulShutdownCloses(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        let token = fixture.token
        let group = ServiceGroup(configuration: .init(
            services: [ModelContainerService(container), IdleService()], logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // While the group runs, the container works.
            try await container.withContext { context in
                context.insert(RequestNote(title: "\(token) before shutdown", body: ""))
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        await Self.expectClosed(container)
    }

    @Test("cancelling the service's task closes the container too", arguments: StoreKind.allCases)
    func cancellationCloses(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, Self.types)
        let container = fixture.container
        _ = try await ModelContext(container).fetchCountAsync(FetchDescriptor<RequestNote>())
        let task = Task { try await ModelContainerService(container).run() }
        task.cancel()
        try await task.value
        await Self.expectClosed(container)
    }
}
