import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

/// Any line a server sends: a ``Response`` (has `"ok"`) or an ``Event`` (has `"event"`).
///
/// ```swift
/// switch try ServerMessage.decode(line: data) {
/// case .response(let response): …
/// case .event(let event): …
/// }
/// ```
@_spi(PGModelInternals) public enum ServerMessage: Hashable, Sendable {
    case response(Response)
    case event(Event)

    private struct Probe: Decodable {
        var isEvent: Bool
        init(from decoder: any Decoder) throws {
            isEvent = try decoder.container(keyedBy: DynamicKey.self).contains(DynamicKey("event"))
        }
    }

    /// Parses a server line; a line that is neither a response nor an event throws `malformed_message`.
    public static func decode(line: Data) throws(PGModelError) -> ServerMessage {
        // A fetch's `table` answer is read by hand; anything else (or a table that is not well formed)
        // by the general decoder, which also names what is wrong.
        if let response = WireTable.decodeLine(line) { return .response(response) }
        return try decodeGenerally(line)
    }

    /// ``decode(line:)-(Data)`` for the bytes a ``LineFramer`` produced. A `table` answer is read where
    /// it lies in the buffer: copying a large one into `Data` first cost a millisecond per 3 MB.
    public static func decode(line: ByteBuffer) throws(PGModelError) -> ServerMessage {
        if let response = line.withUnsafeReadableBytes({ WireTable.decodeLine(bytes: $0) }) { return .response(response) }
        return try decodeGenerally(Data(line.readableBytesView))
    }

    private static func decodeGenerally(_ line: Data) throws(PGModelError) -> ServerMessage {
        let decoder = WireJSON.sharedDecoder
        do {
            if try decoder.decode(Probe.self, from: line).isEvent {
                return .event(try decoder.decode(Event.self, from: line))
            }
            return .response(try decoder.decode(Response.self, from: line))
        } catch {
            let detail = WireJSON.fieldError(error)
            throw PGModelError(.malformedMessage, "the server sent a line that is not a valid response: \(detail.message)")
        }
    }
}
