import Foundation

/// Shares a group activity by its invite, as SharePlay's `GroupActivityTransferRepresentation`
/// shares one through `ShareLink`: exporting the item activates the activity it makes (on
/// `ActivityCenter.shared`, as `activate()` does: its session arrives through `sessions()`, to be
/// joined as usual) and gives the session's invite URL (`.url`), which others accept with
/// `ActivityCenter.accept(_:)`. There is no sharing sheet on Linux: the program passes the URL
/// on. It only exports. In a session of the activity's type already, the URL is that session's,
/// and its activity becomes the new one.
public struct GroupActivityTransferRepresentation<Item: Transferable>: TransferRepresentation {
    private let way: TransferWay<Item>

    /// A representation that exports the activity `exporting` makes for an item, as Apple's.
    public init<ActivityType: GroupActivity>(exporting: @escaping @Sendable (Item) async throws -> ActivityType) {
        way = TransferWay(contentType: .url, export: { item in
            let session = try await ActivityCenter.shared.activatedSession(try await exporting(item))
            return .data(Data(session.invitation.url.absoluteString.utf8))
        }, import: nil)
    }

    /// Itself.
    public var body: Self { self }

    /// The one way: the invite URL, exported.
    public var transferRepresentations: [TransferWay<Item>] { [way] }
}

extension GroupActivity where Self: Transferable {
    /// Shares the activity itself by its invite, as Apple's default for an activity that is
    /// `Transferable`.
    public static var transferRepresentation: GroupActivityTransferRepresentation<Self> {
        GroupActivityTransferRepresentation { activity in activity }
    }
}
