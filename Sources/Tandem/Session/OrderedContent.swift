import TandemWire

/// What an ordered record carries once the session has checked it: its plaintext, or nothing.
///
/// A record that fails a check (unopenable, a bad signature, replayed, of a kind the ordered
/// path does not carry, relabelled) still took an order number at the relay, which reads no
/// body. It is handed on as a placeholder that carries nothing, so that every participant's
/// ordered history counts its order (a late joiner's history then has no gap an invitee can
/// make), and whoever applies the history changes nothing for it.
package enum OrderedContent: Sendable, Hashable {
    /// Opened and verified: the plaintext.
    case plaintext([UInt8])
    /// It failed a check, for this reason (counted and reported as a rejection): it holds
    /// its order and nothing else.
    case placeholder(RejectionReason)

    /// The plaintext, nil for a placeholder.
    package var plaintext: [UInt8]? {
        if case .plaintext(let bytes) = self { bytes } else { nil }
    }
}

/// An ordered record as the session hands it to the playback coordinator: opened, or a
/// placeholder for one that failed a check. `sender` is the signer of an opened one and the
/// relay's word for a placeholder; `retention` the signed one for an opened record and the
/// relay's header for a placeholder.
package typealias OrderedRecord = Ordered<OrderedContent>
