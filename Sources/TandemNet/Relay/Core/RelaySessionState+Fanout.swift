import Foundation
import TandemWire

extension RelaySessionState {
    /// What one fan-out appended: the bytes added to the outboxes, the payload bytes sent, who
    /// is now over an outbox cap, and how full the fullest connected recipient's outbox is.
    struct FanoutOutcome {
        /// How many recipients it was sent to (connected ones).
        var deliveries = 0
        var added = 0
        var bytes = 0
        var overflowing: [UUID] = []
        /// The largest `Participant.backlog` among the connected recipients still reading, 0
        /// with none. Those away, and those whose acknowledgements have freed nothing lately,
        /// are not counted: waiting for a reader that stopped would hold its senders until it
        /// timed out, and one that never reads is what the outbox caps are for.
        var deepest: Double = 0
    }

    /// Appends the frame `make` builds to each recipient's outbox, in place, and adds a send to
    /// `directives` for each one connected. One access to the session for the whole fan-out, and
    /// each participant reached through its index: reaching them through the session table one
    /// recipient at a time (`sessions[id]?.participants[id]?`) would move the whole session value
    /// out of the table and back for every recipient, a cost that grows with the session.
    ///
    /// With `acknowledging` (the instant and the acknowledgement interval), a recipient owed an
    /// acknowledgement that may ride on a frame (`AcknowledgementSchedule.mayPiggyback`) gets it
    /// right after its copy, in the same write; a recipient that acknowledged something within
    /// `patience` of that instant is counted in the outcome's `deepest`.
    mutating func fanOut(to recipients: [UUID], maximumFrames: Int, maximumBytes: Int, acknowledging: (now: Int64, interval: Int64)?,
                         patience: Int64 = 0, into directives: inout [RelayDirective], _ make: (UInt64) -> RelayFrame) -> FanoutOutcome {
        var outcome = FanoutOutcome()
        for id in recipients {
            guard let index = participants.index(forKey: id) else { continue }
            let appended = participants.values[index].append(make, maximumFrames: maximumFrames, maximumBytes: maximumBytes)
            outcome.added += appended.added
            outcome.bytes += appended.frame.payloadSize
            if appended.overflowing { outcome.overflowing.append(id) }
            guard let connection = appended.connection else { continue }
            directives.append(.send(connection, appended.frame))
            outcome.deliveries += 1
            if let now = acknowledging?.now, let reading = participants.values[index].readingAt, now - reading <= patience {
                outcome.deepest = max(outcome.deepest, participants.values[index].backlog(maximumFrames: maximumFrames, maximumBytes: maximumBytes))
            }
            if let acknowledging, participants.values[index].owesAcknowledgement,
               AcknowledgementSchedule.mayPiggyback(acknowledgedAt: participants.values[index].acknowledgedAt, at: acknowledging.now,
                                                    interval: acknowledging.interval) {
                directives.append(.send(connection, participants.values[index].acknowledgeReceived(at: acknowledging.now,
                                                                                                  interval: acknowledging.interval)))
            }
        }
        return outcome
    }
}
