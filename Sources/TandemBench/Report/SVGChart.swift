import Foundation

/// A chart of lines drawn as a standalone SVG document: a title, a legend, two axes with ticks
/// and titles, an optional caption under it all. A pure value; `svg()` draws it.
///
/// Each series is drawn with at most `pointLimit` points (see `ChartSeries.decimated(to:)`).
/// A chart without a single finite point still draws, saying "no data".
public struct SVGChart: Sendable, Equatable {
    /// The most points a series is drawn with.
    public static let pointLimit = 1500

    /// What the chart shows, above it.
    public var title: String
    /// The horizontal axis.
    public var x: ChartAxis
    /// The vertical axis.
    public var y: ChartAxis
    /// The lines, drawn in order (the last on top) and listed in the legend.
    public var series: [ChartSeries]
    /// A sentence under the chart, if it needs one.
    public var caption: String?
    /// The width of the drawing, pixels.
    public var width: Double
    /// The height of the drawing, pixels.
    public var height: Double

    /// A chart of `series`.
    public init(title: String, x: ChartAxis, y: ChartAxis, series: [ChartSeries], caption: String? = nil,
                width: Double = 800, height: Double = 360) {
        self.title = title
        self.x = x
        self.y = y
        self.series = series
        self.caption = caption
        self.width = width
        self.height = height
    }

    /// Where `point` is drawn, in pixels from the drawing's top left corner (with the same
    /// clamping the drawing applies: to the range's edges, and on a logarithmic axis values at
    /// or below zero to its floor). Lays the chart out afresh on each call.
    public func position(of point: ChartPoint) -> ChartPoint {
        let frame = self.frame()
        return ChartPoint(x: frame.x.position(of: point.x), y: frame.y.position(of: point.y))
    }

    /// The whole SVG document.
    public func svg() -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(pixels(width))\" height=\"\(pixels(height))\" "
            + "viewBox=\"0 0 \(pixels(width)) \(pixels(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
        out += "<title>\(title.markupEscaped)</title>\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(pixels(width))\" height=\"\(pixels(height))\" fill=\"#ffffff\"/>\n"
        out += text(title, x: width / 2, y: 24, anchor: "middle", attributes: "font-size=\"15\" font-weight=\"bold\"")
        let frame = self.frame()
        let lines = drawn
        if lines.isEmpty {
            out += "<rect x=\"\(pixels(frame.left))\" y=\"\(pixels(frame.top))\" width=\"\(pixels(frame.right - frame.left))\" "
                + "height=\"\(pixels(frame.bottom - frame.top))\" fill=\"none\" stroke=\"#999999\"/>\n"
            out += text("no data", x: (frame.left + frame.right) / 2, y: (frame.top + frame.bottom) / 2,
                        anchor: "middle", attributes: "font-size=\"16\" fill=\"#666666\"")
        } else {
            out += grid(frame)
            out += "<rect x=\"\(pixels(frame.left))\" y=\"\(pixels(frame.top))\" width=\"\(pixels(frame.right - frame.left))\" "
                + "height=\"\(pixels(frame.bottom - frame.top))\" fill=\"none\" stroke=\"#999999\"/>\n"
            for line in lines {
                out += polyline(line, frame)
            }
            out += tickLabels(frame)
            out += legend(frame)
        }
        out += text(x.title, x: (frame.left + frame.right) / 2, y: frame.bottom + 36, anchor: "middle", attributes: "")
        let middle = (frame.top + frame.bottom) / 2
        out += text(y.title, x: 18, y: middle, anchor: "middle", attributes: "transform=\"rotate(-90 18 \(pixels(middle)))\"")
        if let caption {
            out += text(caption, x: frame.left, y: frame.bottom + 56, anchor: "start", attributes: "font-size=\"11\" font-style=\"italic\" fill=\"#555555\"")
        }
        out += "</svg>\n"
        return out
    }

    /// The plotting area and the axes laid out over it.
    private struct Frame {
        var left: Double
        var right: Double
        var top: Double
        var bottom: Double
        var x: ChartScale
        var y: ChartScale
        /// Each legend entry: its text, its colour and where its swatch starts.
        var legend: [(label: String, colour: String, x: Double, y: Double)]
    }

    /// The series with their non-finite points left out and decimated, those with no point left
    /// out altogether.
    private var drawn: [ChartSeries] {
        series.map { line in
            ChartSeries(name: line.name, colour: line.colour, points: line.points.filter { $0.x.isFinite && $0.y.isFinite })
                .decimated(to: SVGChart.pointLimit)
        }
        .filter { !$0.points.isEmpty }
    }

    private func frame() -> Frame {
        let left = 72.0
        let right = width - 16
        let points = series.flatMap(\.points).filter { $0.x.isFinite && $0.y.isFinite }
        // The legend wraps into as many rows under the title as it needs; a series with nothing
        // to draw is still listed, so its absence reads as a fact rather than an omission.
        var legend: [(label: String, colour: String, x: Double, y: Double)] = []
        var cursor = left
        var row = 44.0
        for line in series where !points.isEmpty {
            let label = line.points.contains { $0.x.isFinite && $0.y.isFinite } ? line.name : "\(line.name) (no data)"
            let entryWidth = 22 + 6.5 * Double(label.count) + 18
            if cursor + entryWidth > right, cursor > left {
                cursor = left
                row += 18
            }
            legend.append((label, line.colour, cursor, row))
            cursor += entryWidth
        }
        let top = legend.isEmpty ? 44.0 : row + 14
        let bottom = height - 46 - (caption == nil ? 0 : 18)
        return Frame(left: left, right: right, top: top, bottom: bottom,
                     x: ChartScale(axis: x, values: points.map(\.x), from: left, to: right),
                     y: ChartScale(axis: y, values: points.map(\.y), from: bottom, to: top),
                     legend: legend)
    }

    private func grid(_ frame: Frame) -> String {
        var out = "<g stroke-width=\"1\">\n"
        for tick in frame.x.ticks {
            let x = pixels(frame.x.position(of: tick.value))
            out += "<line x1=\"\(x)\" y1=\"\(pixels(frame.top))\" x2=\"\(x)\" y2=\"\(pixels(frame.bottom))\" stroke=\"\(gridColour(tick, frame.x))\"/>\n"
        }
        for tick in frame.y.ticks {
            let y = pixels(frame.y.position(of: tick.value))
            out += "<line x1=\"\(pixels(frame.left))\" y1=\"\(y)\" x2=\"\(pixels(frame.right))\" y2=\"\(y)\" stroke=\"\(gridColour(tick, frame.y))\"/>\n"
        }
        return out + "</g>\n"
    }

    /// Light lines at the labelled ticks, lighter at the others, darker at zero on a linear axis
    /// that crosses it.
    private func gridColour(_ tick: ChartScale.Tick, _ scale: ChartScale) -> String {
        if scale.scale == .linear, tick.value == 0, scale.lower < 0 { return "#aaaaaa" }
        return tick.label == nil ? "#f3f3f3" : "#e0e0e0"
    }

    private func polyline(_ line: ChartSeries, _ frame: Frame) -> String {
        var out = "<g>\n<title>\(line.name.markupEscaped)</title>\n"
        let coordinates = line.points.map { "\(pixels(frame.x.position(of: $0.x))),\(pixels(frame.y.position(of: $0.y)))" }
        if coordinates.count == 1, let point = line.points.first {
            out += "<circle cx=\"\(pixels(frame.x.position(of: point.x)))\" cy=\"\(pixels(frame.y.position(of: point.y)))\" r=\"2.5\" "
                + "fill=\"\(line.colour.markupEscaped)\"/>\n"
        } else {
            out += "<polyline fill=\"none\" stroke=\"\(line.colour.markupEscaped)\" stroke-width=\"1.4\" stroke-linejoin=\"round\" "
                + "stroke-opacity=\"0.85\" points=\"\(coordinates.joined(separator: " "))\"/>\n"
        }
        return out + "</g>\n"
    }

    private func tickLabels(_ frame: Frame) -> String {
        var out = "<g fill=\"#333333\" font-size=\"11\">\n"
        for tick in frame.x.ticks {
            guard let label = tick.label else { continue }
            out += text(label, x: frame.x.position(of: tick.value), y: frame.bottom + 16, anchor: "middle", attributes: "")
        }
        for tick in frame.y.ticks {
            guard let label = tick.label else { continue }
            out += text(label, x: frame.left - 6, y: frame.y.position(of: tick.value) + 4, anchor: "end", attributes: "")
        }
        return out + "</g>\n"
    }

    private func legend(_ frame: Frame) -> String {
        var out = "<g>\n"
        for entry in frame.legend {
            out += "<line x1=\"\(pixels(entry.x))\" y1=\"\(pixels(entry.y - 4))\" x2=\"\(pixels(entry.x + 16))\" y2=\"\(pixels(entry.y - 4))\" "
                + "stroke=\"\(entry.colour.markupEscaped)\" stroke-width=\"3\"/>\n"
            out += text(entry.label, x: entry.x + 22, y: entry.y, anchor: "start", attributes: "")
        }
        return out + "</g>\n"
    }

    private func text(_ content: String, x: Double, y: Double, anchor: String, attributes: String) -> String {
        "<text x=\"\(pixels(x))\" y=\"\(pixels(y))\" text-anchor=\"\(anchor)\"\(attributes.isEmpty ? "" : " " + attributes)>"
            + "\(content.markupEscaped)</text>\n"
    }

    /// A coordinate to a tenth of a pixel, which no screen tells apart.
    private func pixels(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
