import LockstepTransport

/// How the patch lines of a recording or of a follow stream reach one reader: as the room wrote them
/// (``WholeRoom``), or projected through the reader's view (``RecordingView``).
protocol RecordingLines {
    /// Appends the line this reader gets for `line`, the patch of `version`, to `bytes` as `format` has it; nothing
    /// when it gets none.
    func append(_ line: [UInt8], version: Int, as format: RecordingFormat, to bytes: inout [UInt8])
    /// The same for the room's frame of the patch.
    func append(_ frame: OutboundFrame, version: Int, as format: RecordingFormat, to bytes: inout [UInt8])
}

extension RecordingLines {
    func append(_ frame: OutboundFrame, version: Int, as format: RecordingFormat, to bytes: inout [UInt8]) {
        append(frame.payload, version: version, as: format, to: &bytes)
    }
}
