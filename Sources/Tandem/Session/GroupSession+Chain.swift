import Foundation

/// The hash chain over the session's order as this participant took it (`OrderedChain`), to
/// compare with other participants': the relay orders sealed bodies it cannot read, and two
/// participants with different heads at one order were shown different histories, at that order
/// or at any before it. A watch party sends its head in its health reports and says
/// `relay-divergence` when they differ; a program that exchanges heads its own way compares them
/// here.
extension GroupSession {
    /// Where this participant's chain stands: its newest order and head, and where it starts;
    /// nil before it starts (a late joiner whose history begins past a gap starts at the first
    /// snapshot that carries its writer's head).
    public var orderedChain: OrderedChainStatus? {
        onLoopAndWait { [self] () -> OrderedChainStatus? in
            let chain = machine.chain
            guard let tip = chain.tip, let anchor = chain.anchor else { return nil }
            let (start, writer): (UInt64, UUID?) = switch anchor {
            case .genesis: (0, nil)
            case .snapshot(let order, let writer): (order, writer)
            }
            return OrderedChainStatus(order: tip.order, head: OrderedChain.hex(tip.head), startOrder: start, startWriter: writer,
                                      isVouched: chain.isVouched)
        }
    }

    /// This participant's chain head (64 hexadecimal digits) at `order`, while it is among the
    /// newest 256 chained; nil otherwise.
    public func orderedChainHead(atOrder order: UInt64) -> String? {
        onLoopAndWait { [self] in machine.chain.head(atOrder: order) }.map(OrderedChain.hex)
    }

    /// Compares `head` (64 hexadecimal digits), which `participant` says it holds at `order`,
    /// with this participant's chain: at once when the chain holds that order, else held until
    /// it reaches it, when a disagreement comes through `orderedChainDivergences()`. An agreeing
    /// head vouches for a chain that started from a snapshot. A head that is not 64 hexadecimal
    /// digits, or this participant's own, says nothing (`unknown`).
    public func compareOrderedChain(order: UInt64, head: String, from participant: Participant) -> OrderedChainComparison {
        guard participant != localParticipant, let bytes = OrderedChain.head(hex: head) else { return .unknown }
        return onLoopAndWait { [self] in machine.chain.compare(order: order, head: bytes, from: participant.id) }
    }

    /// The divergences found from now on outside `compareOrderedChain(order:head:from:)`'s own
    /// answer: a held head that disagreed once this participant's chain reached its order, or a
    /// snapshot whose writer's head disagrees with this chain at the order it reflects. Each reader
    /// gets its own sequence; it finishes with the session.
    public func orderedChainDivergences() -> AsyncStream<OrderedChainDivergence> {
        let (stream, continuation) = AsyncStream.makeStream(of: OrderedChainDivergence.self, bufferingPolicy: .bufferingNewest(64))
        let id = readerID()
        addReader({ [self] in readers.chainDivergences[id] = continuation }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.chainDivergences.removeValue(forKey: id) }
        }
        return stream
    }

    /// A snapshot's state with this participant's chain head at the order it reflects in front
    /// (`SnapshotChainHead`), or none when the chain does not hold that order.
    func chainedSnapshot(_ state: [UInt8], reflecting order: UInt64) -> [UInt8] {
        SnapshotChainHead.wrap(state, head: onLoopAndWait { [self] in machine.chain.head(atOrder: order) })
    }

    /// The records from now on whose ordering instants the relay stamped further ahead of this
    /// participant's own monotonic clock than delivery and the clocks' drift allow (a forward jump
    /// of the session's time; `SessionTimeBound`). Each reader gets its own sequence; it finishes
    /// with the session. A backward step or a slow session clock cannot be told from a slow
    /// delivery and is not reported.
    public func sessionTimeJumps() -> AsyncStream<SessionTimeJump> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionTimeJump.self, bufferingPolicy: .bufferingNewest(64))
        let id = readerID()
        addReader({ [self] in readers.sessionTimeJumps[id] = continuation }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.sessionTimeJumps.removeValue(forKey: id) }
        }
        return stream
    }
}
