/// When mpv keeps the pitch of sound played faster or slower than recorded
/// (`MpvPlayer.Options.pitchCorrection`), through its `audio-pitch-correction` property.
///
/// With pitch correction on, mpv plays any speed but exactly 1 through its time-stretch filter
/// (`scaletempo2`), and speed 1 without stretching (mpv takes the filter out, or a filter kept in
/// copies the sound straight through): the filter's delay comes and goes as the speed crosses 1.
/// The correction loop's nudges move the speed about the group's rate by fractions of a per
/// cent, so at rate 1 the sound's place against mpv's clock would jump by the filter's delay at
/// every nudge, back and forth. With pitch correction off, a speed other than 1 resamples
/// instead: the sound's place moves smoothly with the speed, and its pitch by as much as the
/// speed (a nudge of 0.5 % by less than a tenth of a semitone, which listeners do not notice).
/// At a rate a person chose (1.5, 0.75) the pitch would shift audibly without the filter, and
/// the speed never comes near 1 there.
public enum MpvPitchCorrection: Sendable, Equatable, CustomStringConvertible {
    /// Off while the group plays at rate 1 (within `rateOneBand`, which holds the session
    /// clock's drift), nudges included; on at any other rate. A coordinated player switches it
    /// only while mpv is paused to start on the new rate, before the seek that lines it up, so
    /// that the filter coming or going is never heard (`MpvPlayer+Pitch.swift`).
    case followingRate
    /// On at every rate, mpv's default, with `scaletempo2` kept in the audio chain for good so
    /// that mpv never inserts or removes it (at speed 1 it still copies the sound past its
    /// stretch: see above).
    case always
    /// Off at every rate: a change of speed resamples, and the pitch moves with it.
    case never

    /// How far a rate may be from 1, as a fraction, and still play without pitch correction:
    /// the limit that the Sendspin specification sets for inaudible speed corrections, far
    /// above a session clock's drift (parts per million) and below any rate a person picks.
    public static let rateOneBand = 0.005

    /// Whether mpv corrects pitch while the group plays at `rate` (0 or less: paused, which
    /// counts as 1, the rate every play starts from).
    public func corrects(atRate rate: Double) -> Bool {
        switch self {
        case .followingRate: rate > 0 && abs(rate - 1) > Self.rateOneBand
        case .always: true
        case .never: false
        }
    }

    /// The policy when mpv is started with `extraArguments`: where they set
    /// `--audio-pitch-correction` (the last such option wins, as in mpv), what they set, held at
    /// every rate; otherwise this one.
    public func overridden(by extraArguments: [String]) -> MpvPitchCorrection {
        var result = self
        for argument in extraArguments {
            switch argument {
            case "--audio-pitch-correction", "--audio-pitch-correction=yes": result = .always
            case "--audio-pitch-correction=no", "--no-audio-pitch-correction": result = .never
            default: continue
            }
        }
        return result
    }

    /// `following-rate`, `always` or `never`.
    public var description: String {
        switch self {
        case .followingRate: "following-rate"
        case .always: "always"
        case .never: "never"
        }
    }
}
