import LockstepCore
import LockstepJSON

/// libFuzzer's entry point: one input, checked against the invariants in ``Invariants``.
///
/// A broken invariant traps, which libFuzzer reports as a crash and saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func lockstepFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    Invariants.check(bytes)
    return 0
}
