@_spi(PGModelInternals) @testable import PGModelServer
import Testing

@Suite("Metrics endpoint: readiness state")
struct ServerReadinessTests {
    @Test("the readiness state starts empty, then records the schema and the drain")
    func states() {
        let readiness = ServerReadiness()
        #expect(!readiness.isSchemaLoaded && !readiness.isDraining && readiness.listenerStatus == nil)
        readiness.schemaLoaded()
        readiness.draining()
        #expect(readiness.isSchemaLoaded && readiness.isDraining)
    }
}
