import Hummingbird
import PGModel
import Testing
import TripsAPI

/// The one place PGModel's typed errors become HTTP statuses; `save_conflict` (another request changed
/// what this one changes) is hard to time over HTTP, so its mapping is checked here directly.
@Suite("TripsAPI error mapping")
struct APIErrorTests {
    @Test("PGModel codes map to the statuses the API documents", arguments: [
        (PGModelError.Code.notFound, HTTPResponse.Status.notFound),
        (.saveConflict, .conflict),
        (.uniqueViolation, .conflict),
        (.constraintViolation, .conflict),
        (.deleteDenied, .conflict),
        (.typeMismatch, .badRequest),
        (.invalidField, .badRequest),
        (.forbidden, .forbidden),
        (.timeout, .serviceUnavailable),
        (.connectionFailed, .serviceUnavailable),
        (.internalError, .internalServerError),
        (.invalidConfiguration, .internalServerError),
    ])
    func mapping(_ code: PGModelError.Code, _ status: HTTPResponse.Status) {
        let error = APIError(PGModelError(code, "details"))
        #expect(error.status == status)
        if status.code < 500 {
            #expect(error.code == code.rawValue)
        } else if code != .timeout && code != .connectionFailed {
            // The details of a server-side failure stay in the server's log.
            #expect(error.code == "internal_error")
            #expect(!error.message.contains("details"))
        }
    }
}
