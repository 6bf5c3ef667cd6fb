import TandemClock

// The members of AVFoundation's coordinator and suspension that take a `CMTime`, over Tandem's
// that take an `ItemTime`. Each is disfavoured, so that an argument both could take (`.zero`)
// goes to Tandem's, which means the same.

extension PlaybackCoordinator {
    /// Asks the group to move to `time`, as AVFoundation's `coordinateSeek(to:options:)`: Tandem's
    /// `coordinateSeek(to:options:)` at `time` to the nearest nanosecond. A time that names no
    /// position (invalid, indefinite, infinite) is sent to no one and reported as a
    /// `requestRefused` event, as a time outside the item is.
    @_disfavoredOverload
    public func coordinateSeek(to time: CMTime, options: SeekOptions = []) {
        // Outside every item: the coordinator refuses it with its own event.
        coordinateSeek(to: ItemTime(time) ?? .distantPast, options: options)
    }

    /// Where the group's timeline says the player should be at host clock time `hostClockTime`,
    /// as AVFoundation's `expectedItemTime(atHostTime:)`; the invalid time before the session
    /// clock is known or for a host time that is not numeric.
    @_disfavoredOverload
    public func expectedItemTime(atHostTime hostClockTime: CMTime) -> CMTime {
        guard let host = HostInstant(hostClockTime), let itemTime = expectedItemTime(atHostTime: host) else { return .invalid }
        return CMTime(itemTime)
    }
}

extension PlaybackSuspension {
    /// Ends the suspension proposing that the group move to `time`, as AVFoundation's
    /// `end(proposingNewTime:)`; a time that names no position ends it without proposing one.
    @_disfavoredOverload
    public func end(proposingNewTime time: CMTime) {
        guard let itemTime = ItemTime(time) else { return end() }
        end(proposingNewTime: itemTime)
    }
}
