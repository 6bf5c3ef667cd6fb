import Foundation
import TandemNATS
import TandemNet

/// A bounded wait in a test of a real server: `body`'s result, or a failure after `seconds`.
func within<Value: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    try await withThrowingTaskGroup(of: Value.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimedOut(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "\(what): not within \(seconds) s" }
}

/// The next `count` messages of `subscription`, within `seconds`.
func collect(_ count: Int, from subscription: NATSSubscription, within seconds: Double = 5) async throws -> [NATSMessage] {
    try await within(seconds, "\(count) messages on \(subscription.subject)") {
        var messages: [NATSMessage] = []
        for try await message in subscription {
            messages.append(message)
            if messages.count == count { break }
        }
        return messages
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}

extension Array where Element == UInt8 {
    var text: String { String(decoding: self, as: UTF8.self) }
}
