/// The type byte of each relay frame.
enum RelayFrameType: UInt8 {
    case hello = 0x01, challenge = 0x02, proof = 0x03, claim = 0x04, welcome = 0x05, journalEntry = 0x06, refusal = 0x07, historyEntry = 0x08
    case message = 0x10, attachmentAdd = 0x11, attachmentChunk = 0x12, attachmentRemove = 0x13
    case loadRequest = 0x14, leave = 0x15, end = 0x16, proposal = 0x17, authority = 0x18, authoredProposal = 0x19
    case participantJoined = 0x20, participantLeft = 0x21, delivery = 0x22, attachmentAdded = 0x23
    case attachmentRemoved = 0x24, loadChunk = 0x25, outcome = 0x26, ended = 0x27, ordered = 0x28, participantAway = 0x29
    case ack = 0x30, ping = 0x31, pong = 0x32, error = 0x33, notice = 0x34
}

extension RelayFrameType {
    /// What a decoding error names the frame as ("relay frame delivery"), made once per type:
    /// interpolating an enum case reflects on it, too dear to pay for every frame decoded.
    var decodingContext: String { RelayFrameType.decodingContexts[Int(rawValue)] }

    private static let decodingContexts: [String] = (0...255).map { raw in
        RelayFrameType(rawValue: UInt8(raw)).map { "relay frame \($0)" } ?? "relay frame"
    }
}
