import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A user export read line by line and checked for shape only: JSON objects of known kinds with the
/// fields each needs. Nothing in it is trusted: names in it are looked up in the target's registered
/// schema, never put into SQL.
struct UserImportFile {
    /// A `row` line: the class, the id, and the column names its `values` object holds (with whether
    /// each value is JSON `null`). The values themselves stay in ``text`` for PostgreSQL to read.
    struct Row {
        var line: Int
        var entity: String
        var id: UUID
        var nonNullColumns: [String]
        var nullColumns: [String]
        var text: String
    }

    /// A `share` line.
    struct Share {
        var line: Int
        var entity: String
        var id: UUID
        var grantee: String
        var permission: String
    }

    /// A `link` line.
    struct Link {
        var line: Int
        var entity: String
        var relationship: String
        var id: UUID
        var target: UUID
    }

    var header: UserExportHeader
    var links: [Link] = []
    var rows: [Row] = []
    var shares: [Share] = []
    var history = 0

    private struct Kind: Decodable { var kind: String }
    private struct RowLine: Decodable { var entity: String; var id: UUID; var values: [String: Presence] }
    private struct LinkLine: Decodable { var entity: String; var relationship: String; var id: UUID; var target: UUID }
    private struct ShareLine: Decodable { var entity: String; var id: UUID; var grantee: String; var permission: String }

    /// Any JSON value, remembered only as null or not.
    private struct Presence: Decodable {
        var isNull: Bool
        init(from decoder: any Decoder) throws {
            isNull = (try? decoder.singleValueContainer().decodeNil()) ?? false
        }
    }

    /// Reads `lines` (line 1 the header; blank lines are skipped). Throws `malformedMessage` naming the
    /// first bad line's number.
    init(lines: [String]) throws {
        let decoder = JSONDecoder()
        guard let first = lines.first, !first.allSatisfy(\.isWhitespace) else {
            throw PGModelError(.malformedMessage, "line 1: the file does not start with a pgmodel user export header")
        }
        let header: UserExportHeader
        do {
            header = try decoder.decode(UserExportHeader.self, from: Data(first.utf8))
        } catch {
            throw PGModelError(.malformedMessage, "line 1: not a pgmodel user export header (\(Self.describe(error)))")
        }
        guard header.kind == "header", header.format == UserExportHeader.formatName else {
            throw PGModelError(.malformedMessage, "line 1: not a pgmodel user export header (format '\(header.format)')")
        }
        guard header.version == UserExportHeader.currentVersion else {
            throw PGModelError(.malformedMessage, "line 1: export format version \(header.version) is not supported (this build reads version \(UserExportHeader.currentVersion))")
        }
        self.header = header
        for (index, text) in lines.enumerated().dropFirst() where !text.allSatisfy(\.isWhitespace) {
            let number = index + 1
            let data = Data(text.utf8)
            do {
                switch try decoder.decode(Kind.self, from: data).kind {
                case "row":
                    let row = try decoder.decode(RowLine.self, from: data)
                    let names = row.values.keys.sorted()
                    rows.append(Row(line: number, entity: row.entity, id: row.id,
                                    nonNullColumns: names.filter { row.values[$0]?.isNull == false },
                                    nullColumns: names.filter { row.values[$0]?.isNull == true }, text: text))
                case "share":
                    let share = try decoder.decode(ShareLine.self, from: data)
                    guard share.permission == "readOnly" || share.permission == "readWrite" else {
                        throw PGModelError(.malformedMessage, "line \(number): permission '\(share.permission)' is neither readOnly nor readWrite")
                    }
                    shares.append(Share(line: number, entity: share.entity, id: share.id, grantee: share.grantee, permission: share.permission))
                case "link":
                    let link = try decoder.decode(LinkLine.self, from: data)
                    links.append(Link(line: number, entity: link.entity, relationship: link.relationship, id: link.id, target: link.target))
                case "history":
                    history += 1
                case let kind:
                    throw PGModelError(.malformedMessage, "line \(number): unknown kind '\(kind)' (expected row, link, share or history)")
                }
            } catch let error as PGModelError {
                throw error
            } catch {
                throw PGModelError(.malformedMessage, "line \(number): \(Self.describe(error))")
            }
        }
    }

    /// A decoding failure in a few words, naming the field.
    static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field '\(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return path(context).isEmpty ? "not a JSON object" : "field '\(path(context))' has the wrong type"
        case DecodingError.dataCorrupted(let context):
            return path(context).isEmpty ? "not valid JSON" : "field '\(path(context))' is not valid"
        default:
            return "not valid JSON"
        }
    }
}
