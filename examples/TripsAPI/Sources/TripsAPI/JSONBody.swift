import Foundation
import Hummingbird
import NIOCore

/// Reads a request's JSON body into a `Decodable` value, with answers a client can act on: 413 for a
/// body over the limit, 400 `invalid_input` naming the field for bad JSON, a missing field or a value
/// of the wrong type.
///
/// ```swift
/// let input = try await JSONBody.decode(TripInput.self, from: request)
/// ```
enum JSONBody {
    /// The largest body the API reads, in bytes: a trip is a few hundred.
    static let maximumSize = 64 * 1024

    /// The value of type `type` in `request`'s body; dates are ISO 8601.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumSize)
        } catch is NIOTooManyBytesError {
            throw APIError(status: .contentTooLarge, code: "body_too_large", message: "the body is larger than \(maximumSize) bytes")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError.invalidInput(describe(error))
        } catch {
            throw APIError.invalidInput("the body is not valid JSON")
        }
    }

    /// A sentence naming what was wrong and where, without echoing the input.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            let names = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "the body" : names.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "the body is not valid JSON"
                : "\(path(context.codingPath)) is not valid (dates are ISO 8601, e.g. 2027-04-01T00:00:00Z)"
        @unknown default:
            return "the body is not valid"
        }
    }
}
