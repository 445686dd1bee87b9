import Foundation
import Hummingbird
import PGModel

/// An error the API answers with: an HTTP status and a JSON body with a stable `code` and a message.
///
/// ```json
/// {"error": {"code": "not_found", "message": "no Trip with id 0193… exists"}}
/// ```
///
/// PGModel's typed errors become one with ``init(_:)``, so every route maps them the same way.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable code: PGModel's (`not_found`, `save_conflict`, …) or the API's own (`invalid_input`,
    /// `invalid_id`, `body_too_large`).
    public var code: String
    /// A sentence for a person; never bound values of another user.
    public var message: String

    /// An error with this status, code and message.
    ///
    /// ```swift
    /// throw APIError(status: .notFound, code: "not_found", message: "no such trip")
    /// ```
    public init(status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// 400 `invalid_input`: a body or query the API cannot accept.
    ///
    /// ```swift
    /// throw APIError.invalidInput("budget must be a number of zero or more")
    /// ```
    public static func invalidInput(_ message: String) -> APIError {
        APIError(status: .badRequest, code: "invalid_input", message: message)
    }

    /// The answer for one of PGModel's errors:
    ///
    /// | PGModel code | status |
    /// |---|---|
    /// | `not_found` | 404 |
    /// | `save_conflict`, `unique_violation`, `constraint_violation`, `delete_denied` | 409 |
    /// | `type_mismatch`, `invalid_field`, `relationship_count` | 400 |
    /// | `forbidden` | 403 |
    /// | `timeout`, `connection_failed`, `rate_limited` | 503 |
    /// | anything else | 500, with a generic message (the details are for the server's log) |
    ///
    /// ```swift
    /// catch let error as PGModelError { throw APIError(error) }
    /// ```
    public init(_ error: PGModelError) {
        switch error.code {
        case .notFound:
            self.init(status: .notFound, code: error.code.rawValue, message: error.message)
        case .saveConflict:
            self.init(status: .conflict, code: error.code.rawValue,
                      message: "the trip was changed by someone else since it was read; fetch it again and retry")
        case .uniqueViolation:
            self.init(status: .conflict, code: error.code.rawValue, message: "a trip with that name already exists")
        case .constraintViolation, .deleteDenied:
            self.init(status: .conflict, code: error.code.rawValue, message: error.message)
        case .typeMismatch, .invalidField, .relationshipCount:
            self.init(status: .badRequest, code: error.code.rawValue, message: error.message)
        case .forbidden:
            self.init(status: .forbidden, code: error.code.rawValue, message: error.message)
        case .timeout, .connectionFailed, .rateLimited:
            self.init(status: .serviceUnavailable, code: error.code.rawValue, message: "the database is unavailable; try again later")
        default:
            // Configuration, schema and internal errors say nothing a client can act on.
            self.init(status: .internalServerError, code: "internal_error", message: "the server could not complete the request")
        }
    }

    /// The JSON answer.
    ///
    /// ```swift
    /// let response = try APIError.invalidInput("bad").response(from: request, context: context)
    /// ```
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONEncoder().encode(Body(error: .init(code: code, message: message)))
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The JSON shape of an error answer.
    struct Body: Codable {
        struct Detail: Codable {
            var code: String
            var message: String
        }
        var error: Detail
    }
}
