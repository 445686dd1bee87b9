import Foundation
import PGModelCore
import PGModelWire

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
