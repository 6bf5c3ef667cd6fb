extension RejectionReason {
    /// The retention in the relay's header is not the one its sender signed (a kept record
    /// relabelled as droppable, a snapshot's reflected order moved), or a snapshot's kind and
    /// retention do not go together.
    public static let wrongRetention = RejectionReason(rawValue: "wrong-retention")
}
