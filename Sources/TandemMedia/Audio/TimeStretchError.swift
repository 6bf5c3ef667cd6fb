/// What a `TimeStretcher` refuses: a configuration it cannot run, or a render request outside
/// what it plays. Nothing of the stretcher's state changes when it throws.
public struct TimeStretchError: Error, Equatable, Sendable, CustomStringConvertible {
    private enum Code: Equatable, Sendable {
        case rate
        case position
        case frameCount
        case configuration
    }

    private let code: Code
    /// One line saying what was wrong and with which value.
    public let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// A rate outside `TimeStretcher.rates`, or not a number.
    public static func rateOutOfRange(_ rate: Double) -> TimeStretchError {
        let rates = TimeStretcher.rates
        return TimeStretchError(.rate, "time stretch rate \(rate) is outside \(rates.lowerBound)...\(rates.upperBound)")
    }

    /// A media position that is not finite or too far from zero to address a frame.
    public static func positionOutOfRange(_ position: Double) -> TimeStretchError {
        TimeStretchError(
            .position, "time stretch position \(position) is not a frame position within ±\(TimeStretcher.positionLimit)")
    }

    /// A negative number of frames asked for.
    public static func negativeFrameCount(_ frameCount: Int) -> TimeStretchError {
        TimeStretchError(.frameCount, "time stretch frame count \(frameCount) is negative")
    }

    /// A configuration the stretcher cannot run, with the reason.
    public static func invalidConfiguration(_ reason: String) -> TimeStretchError {
        TimeStretchError(.configuration, "time stretch configuration: \(reason)")
    }

    /// Whether both are the same kind of refusal (the values they name aside).
    public static func == (lhs: TimeStretchError, rhs: TimeStretchError) -> Bool { lhs.code == rhs.code }
}
