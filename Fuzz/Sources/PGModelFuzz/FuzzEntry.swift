/// libFuzzer's entry point: one input through ``FuzzDriver``. A trap is a crash libFuzzer records; a
/// broken invariant is turned into one here so that it is recorded the same way.
///
/// ```sh
/// Fuzz/.build/release/PGModelFuzz -max_total_time=60 Fuzz/corpus
/// ```
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let violations = FuzzDriver.run(Array(UnsafeBufferPointer(start: data, count: size)))
    if let first = violations.first {
        fatalError("invariant broken: \(first)")
    }
    return 0
}
