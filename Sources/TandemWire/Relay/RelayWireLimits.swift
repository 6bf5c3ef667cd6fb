/// The sizes a relay frame's fields may have. The decoder checks each against these before
/// allocating, and the relay's own limits (`RelayLimits` in TandemNet) are the same numbers.
public enum RelayWireLimits {
    /// The longest frame after its 4-byte length prefix: room for the largest message body with
    /// a full recipient list, and for a welcome with the largest activity description.
    public static let maximumFrameLength = 1024 * 1024
    /// The largest message body, sealed.
    public static let maximumBody = 256 * 1024 + 1024
    /// The largest activity description or attachment metadata, sealed.
    public static let maximumMetadata = 64 * 1024
    /// How many recipients one message may name.
    public static let maximumRecipients = 4096
    /// How many participants a welcome may list (the relay admits no more to one session).
    public static let maximumParticipants = 4096
    /// The largest signed presence, sealed.
    public static let maximumPresence = 1024
    /// How many former participants a session remembers (the oldest are forgotten first).
    public static let maximumFormerParticipants = 256
    /// The longest display name in UTF-8 bytes.
    public static let maximumNameLength = 256
    /// The longest reason or error text in UTF-8 bytes.
    public static let maximumTextLength = 1024
    /// How much attachment data one chunk frame carries at most: a 100 MiB attachment travels as
    /// 400 frames, so that no frame needs a giant buffer and other traffic can pass between them.
    public static let attachmentChunkSize = 256 * 1024
    /// The largest attachment size a frame may announce: 100 MiB and room for sealing.
    public static let maximumAttachment = 100 * 1024 * 1024 + 1024
    /// The size of the relay's challenge nonce.
    public static let secretLength = 32
    /// The size of an Ed25519 public key: a participant's, or a session's verifier.
    public static let publicKeyLength = 32
    /// The size of an Ed25519 signature.
    public static let signatureLength = 64
    /// The size of a hello's creation proof (a keyed BLAKE2b hash).
    public static let creationProofLength = 32
    /// An invite's ticket: its expiry (u64, Unix seconds), its lifetime (u32, seconds) and an
    /// operator's Ed25519 signature.
    public static let inviteTicketLength = 8 + 4 + 64
    /// The size of the token that names a participant's datagrams.
    public static let tokenLength = 16
}
