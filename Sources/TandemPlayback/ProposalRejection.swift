/// Why a proposal was not applied: it failed `CoordinationCore`'s validation (the same on every
/// participant, so all skip the same ones), or its body was no proposal at all.
///
/// Thrown by the coordinator when the local participant proposes such a change itself, and
/// carried by `CoordinationCore.Event.proposalRejected` when one arrives from the group.
/// Compare `reason` with the static members (`.rateOutOfRange`, ...); `detail` says what was
/// wrong, in a line for people to read.
public struct ProposalRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of fault a rejected proposal has.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable {
            case unreadable = "unreadable"
            case oversized = "oversized"
            case notFinite = "not-finite"
            case rateOutOfRange = "rate-out-of-range"
            case mediaTimeOutOfRange = "media-time-out-of-range"
            case effectiveInstantOutOfRange = "effective-instant-out-of-range"
            case tooManySuspensions = "too-many-suspensions"
            case waitingLimitOutOfRange = "waiting-limit-out-of-range"
            case tooManyParticipants = "too-many-participants"
            case tooManyEntries = "too-many-entries"
            case unknownEntry = "unknown-entry"
            case duplicateEntry = "duplicate-entry"
            case durationOutOfRange = "duration-out-of-range"
            case otherItem = "other-item"
            case notPermitted = "not-permitted"
        }

        private let code: Code

        private init(_ code: Code) { self.code = code }

        /// The body is not a proposal this version understands (malformed, or a newer kind).
        public static let unreadable = Reason(.unreadable)
        /// The body, or a string in it, is longer than a proposal's may be.
        public static let oversized = Reason(.oversized)
        /// A rate is NaN or infinite.
        public static let notFinite = Reason(.notFinite)
        /// A rate other than 0 outside `CoordinationCore.playableRates`.
        public static let rateOutOfRange = Reason(.rateOutOfRange)
        /// A media time before 0 or past the item's duration.
        public static let mediaTimeOutOfRange = Reason(.mediaTimeOutOfRange)
        /// An effective instant before its ordering instant, or more than
        /// `CoordinationCore.maximumLead` after it.
        public static let effectiveInstantOutOfRange = Reason(.effectiveInstantOutOfRange)
        /// More suspensions than the group or one participant may hold at once.
        public static let tooManySuspensions = Reason(.tooManySuspensions)
        /// A waiting limit below 0 or above `CoordinationCore.maximumWaitingLimit`.
        public static let waitingLimitOutOfRange = Reason(.waitingLimitOutOfRange)
        /// More participants reporting what they loaded than the core keeps.
        public static let tooManyParticipants = Reason(.tooManyParticipants)
        /// A queue change that would hold more entries than `PlaybackQueue.maximumEntries`.
        public static let tooManyEntries = Reason(.tooManyEntries)
        /// A queue change naming an entry the queue does not hold.
        public static let unknownEntry = Reason(.unknownEntry)
        /// A queue change adding an entry whose id the queue already holds.
        public static let duplicateEntry = Reason(.duplicateEntry)
        /// A queue entry's duration below 0 or above `PlaybackQueue.maximumEntryDuration`.
        public static let durationOutOfRange = Reason(.durationOutOfRange)
        /// A seek in an item that is no longer the group's: an item's end, or another
        /// participant's switch, came between the request and its record.
        public static let otherItem = Reason(.otherItem)
        /// A change of playback from a participant the session's policy does not let change it
        /// (`SessionPolicy.playback` is `.operators` and it is no operator), as the roles stood
        /// before the proposal's order.
        public static let notPermitted = Reason(.notPermitted)

        /// The reason's name, as events print it (`rate-out-of-range`).
        public var description: String { code.rawValue }
    }

    /// What kind of fault it is.
    public let reason: Reason
    /// What was wrong, for people to read ("rate 1e+15 is not 0 or within 0.25…4").
    public let detail: String

    /// A rejection for `reason`, saying `detail`.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The detail.
    public var description: String { detail }
}
