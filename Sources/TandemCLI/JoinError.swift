import Tandem
import TandemNet

extension CLIError {
    /// Joining the party of `invitation` failed with `error`: what happened, in one line, and what
    /// to do about it where that is known.
    static func joining(_ invitation: Invitation, _ error: any Error) -> CLIError {
        let relays = invitation.relays.map { "\($0)" }.joined(separator: ", ")
        guard let relayError = (error as? RelayError) ?? (error as? GroupSessionError)?.relayError else {
            return .failure(TerminalText.sanitized("\(error)"))
        }
        switch relayError.code {
        case .unreachable:
            return .failure("the relay at \(relays) does not answer: is the party still on? Ask the host for a new invite")
        case .sessionNotFound:
            return .failure("this party is not on its relay (\(relays)) any more: it ended, or its relay restarted. Ask the host for a new invite")
        case .sessionEnded:
            return .failure("this party has ended")
        case .wrongSecret:
            return .failure("this invite's secret does not match the party's: ask the host to send the invite again")
        default:
            return .failure(TerminalText.sanitized("\(error)"))
        }
    }
}
