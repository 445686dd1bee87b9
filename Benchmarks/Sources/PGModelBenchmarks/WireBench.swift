import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// `--wire`: the fetch-all answer's `table` line alone, written and read `rounds` times without sockets
/// or a database (the service's own share of a large fetch, for profiling the wire coding).
func runWireBench(rows: Int, rounds: Int) throws {
    let synthetic = (0..<rows).map(BenchProduct.sampleRow)
    let table = FetchedTable(rows: synthetic)
    var encode: [Double] = [], decode: [Double] = [], free: [Double] = []
    var bytes = 0
    for _ in 0..<rounds {
        var t = DispatchTime.now().uptimeNanoseconds
        let line = try WireTable.encodeLine(id: 1, table: table)
        encode.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        bytes = line.count
        t = DispatchTime.now().uptimeNanoseconds
        var back = WireTable.decodeLine(line.dropLast())
        decode.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        guard case .success(.table(let got))? = back?.result, got.rows.count == rows else {
            throw PGModelError(.internalError, "wire round trip")
        }
        t = DispatchTime.now().uptimeNanoseconds
        back = nil
        free.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
    }
    func median(_ x: [Double]) -> String { String(format: "%.2f", x.sorted()[x.count / 2]) }
    func least(_ x: [Double]) -> String { String(format: "%.2f", x.min() ?? 0) }
    print("table line of \(rows) rows, \(bytes) bytes, \(rounds) rounds (median/min): encode \(median(encode))/\(least(encode)) ms, decode \(median(decode))/\(least(decode)) ms, free \(median(free)) ms")
}

/// `--wire`'s second part: a save of `rows` new rows as request lines of at most 1 MiB, the way a service
/// save in parts sends them: written (the client's share) and read (the server's share, one part after
/// another as they arrive).
func runSaveWireBench(rows: Int, rounds: Int) throws {
    let inserts = (0..<rows).map { RowValues(entity: "BenchProduct", id: UUID.v7(), values: BenchProduct.sampleRow($0).values) }
    let perPart = 3_500
    var encode: [Double] = [], decode: [Double] = []
    var bytes = 0
    for _ in 0..<rounds {
        var lines: [Data] = []
        var t = DispatchTime.now().uptimeNanoseconds
        for (index, start) in stride(from: 0, to: rows, by: perPart).enumerated() {
            let part = SavePart(index: index, count: (rows + perPart - 1) / perPart)
            lines.append(try Request(id: .int(Int64(index)), operation: .save(SaveRequest(inserts: Array(inserts[start..<min(rows, start + perPart)]))),
                                     part: part).encodedLine())
        }
        encode.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        bytes = lines.reduce(0) { $0 + $1.count }
        t = DispatchTime.now().uptimeNanoseconds
        var read = 0
        for line in lines {
            guard case .success(let request) = Request.decode(line: line.dropLast()), case .save(let save) = request.operation else {
                throw PGModelError(.internalError, "save line round trip")
            }
            read += save.inserts.count
        }
        decode.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        guard read == rows else { throw PGModelError(.internalError, "save line round trip lost rows") }
    }
    func median(_ x: [Double]) -> String { String(format: "%.2f", x.sorted()[x.count / 2]) }
    print("save of \(rows) rows in parts of \(perPart), \(bytes) bytes, \(rounds) rounds (median): encode \(median(encode)) ms, decode \(median(decode)) ms")
}
