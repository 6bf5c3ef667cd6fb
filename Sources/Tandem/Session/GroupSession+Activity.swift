import Foundation
import TandemWire

/// An activity change as it travels in the session's ordered stream: a marker no JSON body can
/// start with, then the activity's description (identifier and JSON). It is kept by the relay
/// (`.kept`), so that late joiners replay every change from the history.
package enum ActivityChange {
    /// The two bytes that open every activity change (a NUL, then "A").
    static let marker: [UInt8] = [0x00, 0x41]

    /// Whether an ordered record's plaintext is an activity change, not a playback proposal: the
    /// coordinator skips these (they take an order number like any other record).
    package static func isChange(_ body: [UInt8]) -> Bool {
        body.count >= marker.count && Array(body.prefix(marker.count)) == marker
    }

    static func encode<Activity: GroupActivity>(_ activity: Activity) throws -> [UInt8] {
        marker + Array(try JSONEncoder().encode(ActivityDescription(activity)))
    }

    static func decode(_ body: [UInt8]) -> ActivityDescription? {
        guard isChange(body) else { return nil }
        return try? JSONDecoder().decode(ActivityDescription.self, from: Data(body.dropFirst(marker.count)))
    }
}
