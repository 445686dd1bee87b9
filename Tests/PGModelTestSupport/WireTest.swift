import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) import PGModelWire

/// Helpers shared by the wire and server tests.
package enum WireTest {
    /// The line of `value` without its trailing newline, as text.
    package static func text(_ data: Data) throws -> String {
        #expect(data.last == 0x0A, "every encoded line ends with a newline")
        #expect(data.dropLast().contains(0x0A) == false, "an encoded line contains exactly one newline")
        return String(decoding: data.dropLast(), as: UTF8.self)
    }

    /// Decodes a request line given as text.
    package static func decode(_ line: String) -> Result<Request, RequestDecodingFailure> {
        Request.decode(line: Data(line.utf8))
    }

    /// The decoding failure of `line`; records an issue when it decodes.
    package static func failure(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> RequestDecodingFailure? {
        switch decode(line) {
        case .success(let request):
            Issue.record("expected a decoding failure, got \(request)", sourceLocation: sourceLocation)
            return nil
        case .failure(let failure):
            return failure
        }
    }

    package static let tripID = UUID(uuidString: "0193A7C4-5E6F-7A8B-9C0D-1E2F3A4B5C6D") ?? UUID()
    package static let otherID = UUID(uuidString: "0193A7C4-5E6F-7A8B-9C0D-000000000001") ?? UUID()
    package static let userID = UUID(uuidString: "0193A7C4-0000-7000-8000-00000000A11C") ?? UUID()
}
