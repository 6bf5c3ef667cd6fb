import Foundation

extension PlaybackCoordinator {
    /// Connects the coordinator to `coordinationMedium`, as AVFoundation's
    /// `coordinate(using:)`: from now on its player is coordinated with the other players
    /// connected to the medium, each change made on any of them taking effect on all at one
    /// instant. nil disconnects it from its medium: its player keeps what it was last issued and
    /// is no longer coordinated with the others, who are told it left. Connecting to another
    /// medium leaves the first; connecting again to the medium it is connected to changes
    /// nothing.
    ///
    /// A coordinator connected to a medium comes in where the medium's players are (a late
    /// connection adopts their timeline, as a late joiner of a session does) and reports its
    /// player's item. It throws while the coordinator coordinates with a group session: a
    /// coordinator follows a session or a medium, not both (`coordinateWithSession(_:)` leaves
    /// the medium).
    public func coordinate(using coordinationMedium: PlaybackCoordinationMedium?) throws {
        let current = currentChannel
        if current != nil, !(current is MediumChannel) {
            throw CoordinatorError("the coordinator coordinates with a group session: it cannot connect to a coordination medium too")
        }
        let connection = current as? MediumChannel
        guard connection?.medium !== coordinationMedium else { return }
        guard let coordinationMedium else {
            stopCoordinating()
            if let connection { connection.medium.disconnect(connection.localParticipant) }
            return
        }
        let participant = UUID()
        coordinationMedium.connect(participant, coordinator: self)
        coordinate(over: MediumChannel(medium: coordinationMedium, localParticipant: participant))
        if let connection { connection.medium.disconnect(connection.localParticipant) }
        reportDelegateItem()
    }

    /// The coordination medium the coordinator is connected to, as AVFoundation's property; nil
    /// when it is connected to none (it may then coordinate with a group session).
    public var playbackCoordinationMedium: PlaybackCoordinationMedium? {
        (currentChannel as? MediumChannel)?.medium
    }

    /// Disconnects from the medium, if connected to one, before coordinating over something else.
    func leaveMedium() {
        guard let connection = currentChannel as? MediumChannel else { return }
        stopCoordinating()
        connection.medium.disconnect(connection.localParticipant)
    }
}
