import Foundation
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// A connection that never logs in is closed with a coded line; one that logged in is not.
@Suite("Server: login timeout")
struct LoginTimeoutTests {
    @Test("no hello within the login timeout: a timeout line with id null, then the socket closes")
    func silentConnectionIsClosed() async throws {
        let user = try await ServerTestHarness.makeUser("login")
        // 3 s, not less: the last client must get its hello read within it while the whole integration
        // suite runs beside it on two cores (at 1 s a loaded CI run once closed it before its hello).
        let loginTimeout = Duration.seconds(3)
        try await ServerTestHarness.withRunningServer(loginTimeout: loginTimeout) { _, port in
            let silent = try await RawProtocolClient.connect(port: port)
            defer { Task { await silent.close() } }
            let line = try RawResponse(try await silent.readLine(timeout: .seconds(10)))
            #expect(line.code == "timeout", "\(line)")
            #expect(line.object["id"] is NSNull)
            await #expect(throws: RawProtocolClient.Timeout.self) { _ = try await silent.readLine(timeout: .seconds(10)) }

            // A ping is no login: the connection still goes.
            let pinging = try await RawProtocolClient.connect(port: port)
            defer { Task { await pinging.close() } }
            #expect(try await pinging.request(#"{"id":1,"op":"ping"}"#).ok == true)
            #expect(try RawResponse(try await pinging.readLine(timeout: .seconds(10))).code == "timeout")

            // Logged in in time: still served after the timeout passed.
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
            try await Task.sleep(for: loginTimeout + .milliseconds(500))
            #expect(try await client.request(#"{"id":2,"op":"ping"}"#).ok == true)
        }
    }
}
