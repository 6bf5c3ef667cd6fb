import Foundation

/// A point on the canvas, in character cells from the top left.
struct Point: Codable, Hashable {
    var x: Int
    var y: Int
}

/// One stroke: what travels on the unreliable messenger, small enough to send as it is drawn.
struct Stroke: Codable, Identifiable {
    var id: UUID
    /// The character it is drawn with.
    var ink: String
    var points: [Point]
}

/// Clears the canvas for everyone; sent reliably, because a lost clear would leave the canvases
/// different for good.
struct ClearCanvas: Codable {}

/// The strokes so far, sent reliably to participants who join late.
struct CanvasMessage: Codable {
    var strokes: [Stroke]
}

/// The shared drawing, as each participant holds it: strokes in the order they arrived, each
/// once (a late joiner may get the same stroke from several participants).
struct Canvas {
    static let width = 40
    static let height = 12

    private(set) var strokes: [Stroke] = []
    private var ids: Set<UUID> = []

    /// Adds `stroke` unless it is already here; returns whether it was new.
    @discardableResult
    mutating func add(_ stroke: Stroke) -> Bool {
        guard ids.insert(stroke.id).inserted else { return false }
        strokes.append(stroke)
        return true
    }

    mutating func clear() {
        strokes.removeAll()
        ids.removeAll()
    }

    /// The canvas as text: a frame of `+`, `-` and `|` around the cells.
    func rendered() -> [String] {
        var cells = Array(repeating: Array(repeating: Character(" "), count: Canvas.width), count: Canvas.height)
        for stroke in strokes {
            let ink = stroke.ink.first ?? "#"
            for point in stroke.points where Canvas.contains(point) {
                cells[point.y][point.x] = ink
            }
        }
        let border = "+" + String(repeating: "-", count: Canvas.width) + "+"
        return [border] + cells.map { "|" + String($0) + "|" } + [border]
    }

    static func contains(_ point: Point) -> Bool {
        (0..<width).contains(point.x) && (0..<height).contains(point.y)
    }

    /// The cells of a straight line from `start` to `end` (Bresenham's).
    static func line(from start: Point, to end: Point) -> [Point] {
        var points: [Point] = []
        var x = start.x, y = start.y
        let dx = abs(end.x - start.x), dy = -abs(end.y - start.y)
        let stepX = start.x < end.x ? 1 : -1, stepY = start.y < end.y ? 1 : -1
        var error = dx + dy
        while true {
            points.append(Point(x: x, y: y))
            if x == end.x && y == end.y { return points }
            let doubled = 2 * error
            if doubled >= dy { error += dy; x += stepX }
            if doubled <= dx { error += dx; y += stepY }
        }
    }
}
