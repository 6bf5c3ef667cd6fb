import Foundation
import TandemNet

/// The session's side of streamed media (`TandemStreaming`): bodies of kind
/// `BodyKind.mediaStream`, signed by their sender and sealed with the session's key like every
/// other body, reliable, addressed to one participant or to all.
extension GroupSession {
    /// The route the streaming bodies' readers subscribe on: not a Swift type's name, and
    /// never delivered to a messenger (a `.message` body on it is dropped).
    var streamRoute: String { sessionStreamRoute }

    /// Sends a streaming body to `recipient` (nil: everyone else). Throws `.notJoined` before
    /// joining, `.tooLarge` past the relay's body limit, and `queueFull` (as `.transport`)
    /// when the link's send queue is full: the caller sends it again later.
    package func sendStreamBody(_ payload: [UInt8], to recipient: UUID?) throws(GroupSessionError) {
        guard let link = sendingLink else {
            throw GroupSessionError(.notJoined, "the session is not joined: call join() and wait for .joined")
        }
        let recipients: Recipients = recipient.map { .only([$0]) } ?? .everyone
        do throws(RelayError) {
            try link.send(bodies.seal(payload, kind: .mediaStream, path: .reliable, to: recipients), to: recipients, reliable: true)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// The streaming bodies that arrive from now on, each with its sender's identity; it ends
    /// when the session is invalidated.
    package func streamBodies() -> StreamBodies { StreamBodies(base: subscribe(type: streamRoute)) }
}

/// Streaming bodies as they arrive: the payload and its sender's identity.
package struct StreamBodies: AsyncSequence, Sendable {
    /// A payload and who signed it.
    package typealias Element = (payload: [UInt8], sender: UUID)
    /// Never fails.
    package typealias Failure = Never

    let base: AsyncStream<InboundMessage>

    /// Iterates the bodies.
    package func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    /// The bodies one at a time.
    package struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<InboundMessage>.Iterator

        /// The next body, or nil once the session is over.
        package mutating func next() async -> Element? {
            guard let inbound = await base.next() else { return nil }
            return (inbound.payload, inbound.source.id)
        }
    }
}
