/// The type byte of each relay frame.
enum RelayFrameType: UInt8 {
    case hello = 0x01, challenge = 0x02, proof = 0x03, claim = 0x04, welcome = 0x05, journalEntry = 0x06, refusal = 0x07, historyEntry = 0x08
    case message = 0x10, attachmentAdd = 0x11, attachmentChunk = 0x12, attachmentRemove = 0x13
    case loadRequest = 0x14, leave = 0x15, end = 0x16, proposal = 0x17
    case participantJoined = 0x20, participantLeft = 0x21, delivery = 0x22, attachmentAdded = 0x23
    case attachmentRemoved = 0x24, loadChunk = 0x25, outcome = 0x26, ended = 0x27, ordered = 0x28
    case ack = 0x30, ping = 0x31, pong = 0x32, error = 0x33
}
