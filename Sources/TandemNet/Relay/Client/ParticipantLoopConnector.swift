/// A connector that names the event loop a participant's link will run on before it joins, and
/// joins on it: the participant's loop, where the link and everything confined with it (the
/// session) run, so that the link's events reach the session without a hop.
package protocol ParticipantLoopConnector: RelayConnector {
    /// The loop for a new participant (one of the process's shared loops).
    func participantLoop() throws(RelayError) -> any SerialEventLoop
    /// Joins (or creates) the session that `request` names, with the link on `loop` when the
    /// connector can run it there (on its own loop otherwise).
    func join(_ request: RelayJoinRequest, on loop: any SerialEventLoop) async throws(RelayError) -> any RelayLink
}
