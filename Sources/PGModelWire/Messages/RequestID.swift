/// A request's `id`: an integer or a string chosen by the client and echoed in the response.
///
/// ```swift
/// let id: RequestID = 7          // {"id":7,…}
/// let other: RequestID = "a-1"   // {"id":"a-1",…}
/// ```
@_spi(PGModelInternals) public enum RequestID: Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, ExpressibleByStringLiteral
{
    case int(Int64)
    case string(String)

    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(stringLiteral value: String) { self = .string(value) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .int(number)
            return
        }
        if let text = try? container.decode(String.self) {
            guard text.utf8.count <= WireProtocol.maxStringIDBytes else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "a string id has at most \(WireProtocol.maxStringIDBytes) bytes")
            }
            self = .string(text)
            return
        }
        throw DecodingError.typeMismatch(
            RequestID.self,
            .init(codingPath: decoder.codingPath, debugDescription: "an id is an integer or a string"))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .int(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        }
    }

    public var description: String {
        switch self {
        case .int(let number): return String(number)
        case .string(let text): return "\"\(text)\""
        }
    }
}
