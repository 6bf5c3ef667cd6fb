/// Pitch correction set for the rate (`MpvPitchCorrection`).
///
/// mpv takes `audio-pitch-correction` at once when it is set, without reloading its audio
/// output: at a speed other than 1 its time-stretch filter is inserted (turned on) or drained
/// and removed (turned off) at the next audio frame, and the sound's place against mpv's clock
/// steps by the filter's delay. So the machine (`MpvMachine.Configuration.pitchCorrection`)
/// switches it only in a start on a timeline, after
/// pausing mpv and before the seek that lines it up, which flushes the chain: nothing of the
/// step is heard or read. A start that would otherwise unpause on a pre-rolled frame seeks again
/// when the setting changed, so that no sound filtered the other way is left in the chain.
/// Uncoordinated, a rate set through the transport (or a person's change of speed in mpv)
/// switches it with the speed, as mpv itself inserts its filter when the speed leaves 1.
extension MpvPlayer.Options {
    /// `pitchCorrection`, unless `extraArguments` set `--audio-pitch-correction`, which wins.
    public var effectivePitchCorrection: MpvPitchCorrection {
        pitchCorrection.overridden(by: extraArguments)
    }
}

extension MpvPitchCorrection {
    /// Tandem's own mpv options for the policy, before the extra arguments: pitch correction off
    /// from the start unless it is on at rate 1.
    public var launchArguments: [String] {
        corrects(atRate: 1) ? [] : ["--audio-pitch-correction=no"]
    }
}
