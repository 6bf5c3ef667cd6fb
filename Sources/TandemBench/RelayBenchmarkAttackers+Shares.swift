import Foundation
import TandemNet
import TandemWire

/// The attacks on the relay's shared pools: places of connections not yet admitted, and the
/// memory budget. Each loop is bounded in time (the attackers' deadline) and each dose in count
/// or bytes.
extension RelayAttackers {
    /// Holds `plan.idleSockets` sockets open without a word, spread over four sources of their
    /// own, reopening each half a second after the relay closes it (a bounded dose: at most two
    /// connections a second a socket, so that what is measured is the places held, not a flood
    /// of connections).
    func idleSocketAttack() {
        guard plan.idleSockets > 0 else { return }
        let sources = (3...6).compactMap { try? SocketAddress(host: "127.0.0.\($0)", port: 0) }
        guard !sources.isEmpty else { return }
        var slots = [AttackConnection?](repeating: nil, count: plan.idleSockets)
        var reopenAt = [Int64](repeating: 0, count: plan.idleSockets)
        while running {
            for index in slots.indices where running {
                if slots[index] == nil {
                    guard clock.instant().nanoseconds >= reopenAt[index] else { continue }
                    guard let connection = try? AttackConnection(address: address, source: sources[index % sources.count], clock: clock) else {
                        continue
                    }
                    count { $0.connectionsOpened += 1 }
                    slots[index] = connection
                }
                do {
                    // Reading only finds out whether the relay has closed it.
                    _ = try slots[index]?.readAvailable(limit: 4096)
                } catch {
                    count { $0.connectionsCut += 1 }
                    slots[index] = nil
                    reopenAt[index] = clock.instant().nanoseconds + 500_000_000
                }
            }
            pause(microseconds: 20_000)
        }
    }

    /// Each of `plan.memoryHogs` connections creates a session of its own and uploads 16 MiB
    /// attachments into it, up to `plan.memoryHogBytes`, then stays, reading what it is sent.
    func memoryHogAttack() {
        guard plan.memoryHogs > 0 else { return }
        var hogs: [(connection: AttackConnection, sequence: UInt64, sent: Int, alive: Bool)] = []
        for _ in 0..<plan.memoryHogs {
            guard running, let connection = join(session: UUID(), sessionKey: SigningKeyPair(), create: true) else { continue }
            hogs.append((connection, 0, 0, true))
        }
        let chunk = [UInt8](repeating: 0xC3, count: RelayWireLimits.attachmentChunkSize)
        let attachment = 64 * chunk.count
        while running {
            for index in hogs.indices where hogs[index].alive {
                do {
                    if hogs[index].sent < plan.memoryHogBytes, hogs[index].connection.pendingBytes < 1 << 20 {
                        let id = UUID()
                        hogs[index].sequence += 1
                        hogs[index].connection.queue(.attachmentAdd(sequence: hogs[index].sequence,
                                                                     entry: RelayAttachmentEntry(id: id, owner: UUID(), size: attachment, metadata: [])))
                        for _ in 0..<64 {
                            hogs[index].sequence += 1
                            hogs[index].connection.queue(.attachmentChunk(sequence: hogs[index].sequence, id: id, data: chunk[...]))
                        }
                        hogs[index].sent += attachment
                    }
                    try flush(hogs[index].connection)
                    _ = try hogs[index].connection.readAvailable(limit: 1 << 20)
                } catch {
                    count { $0.connectionsCut += 1 }
                    hogs[index].alive = false
                }
            }
            pause(microseconds: 2_000)
        }
    }
}
