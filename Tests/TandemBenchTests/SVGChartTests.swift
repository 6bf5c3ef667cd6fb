import Foundation
import Testing
import TandemBench

/// Charts drawn as SVG: well-formed, decimated without losing spikes, with decade ticks on
/// logarithmic axes, and drawn even without data.
@Suite struct SVGChartTests {
    private func chart(_ series: [ChartSeries], y: ChartAxis.Scale = .logarithmic, title: String = "spread") -> SVGChart {
        SVGChart(title: title, x: ChartAxis(title: "time (s)"), y: ChartAxis(title: "spread (ms)", scale: y), series: series)
    }

    private func pixels(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    @Test func aChartIsAStandaloneWellFormedSVG() throws {
        let series = ChartSeries(name: "tandem", colour: "#1f77b4", points: (0..<100).map { ChartPoint(x: Double($0), y: 0.1 + Double($0) / 1000) })
        let svg = chart([series]).svg()
        let document = SVGDocument(svg)
        #expect(document.error == nil)
        #expect(document.root == "svg")
        let root = try #require(document.elements.first?.attributes)
        #expect(root["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root["viewBox"] == "0 0 800.0 360.0")
        #expect(root["width"] == "800.0")
        #expect(document.polylines.count == 1)
        #expect(document.polylines[0].count == 100)
        #expect(document.texts.contains("spread"))
        #expect(document.texts.contains("tandem"))
        #expect(document.texts.contains("time (s)"))
        #expect(document.elements.contains { $0.name == "polyline" && $0.attributes["stroke"] == "#1f77b4" })
    }

    @Test func tenThousandPointsAreDrawnWithAtMost1500AndTheSpikeSurvives() throws {
        let spike = ChartPoint(x: 654.3, y: 1000)
        let points = (0..<10_000).map { index in
            index == 6543 ? spike : ChartPoint(x: Double(index) / 10, y: 1 + Double(index % 7) / 10)
        }
        let series = ChartSeries(name: "baseline", colour: "#d62728", points: points)
        let drawn = chart([series])
        let document = SVGDocument(drawn.svg())
        #expect(document.error == nil)
        let line = try #require(document.polylines.first)
        #expect(line.count <= SVGChart.pointLimit)
        #expect(line.count > 1000)
        let position = drawn.position(of: spike)
        let top = pixels(position.y)
        #expect(line.contains { $0.x == pixels(position.x) && $0.y == top })
        // The spike is the highest point drawn: nothing has a smaller y.
        let highest = try #require(line.compactMap { Double($0.y) }.min())
        #expect(pixels(highest) == top)

        let decimated = series.decimated(to: SVGChart.pointLimit)
        #expect(decimated.points.count <= 1500)
        #expect(decimated.points.contains(spike))
        #expect(decimated.points.contains { $0.y == 1 })
        #expect(zip(decimated.points, decimated.points.dropFirst()).allSatisfy { $0.x < $1.x })
        #expect(series.decimated(to: 20_000) == series)
    }

    @Test func aLogarithmicAxisIsLabelledAtTheDecades() {
        let values = [0.05, 0.3, 2, 17, 50]
        let series = ChartSeries(name: "spread", colour: "#1f77b4", points: values.enumerated().map { ChartPoint(x: Double($0), y: $1) })
        let document = SVGDocument(chart([series]).svg())
        #expect(document.error == nil)
        for decade in ["0.01", "0.1", "1", "10", "100"] {
            #expect(document.texts.contains(decade), "no tick labelled \(decade)")
        }
        #expect(!document.texts.contains("0.001"))
        #expect(!document.texts.contains("1000"))
    }

    @Test func valuesAtOrBelowZeroAreDrawnAtTheLogarithmicFloor() {
        let series = ChartSeries(name: "spread", colour: "#1f77b4", points: [ChartPoint(x: 0, y: 0), ChartPoint(x: 1, y: -2),
                                                                             ChartPoint(x: 2, y: 0.05), ChartPoint(x: 3, y: 5)])
        let drawn = chart([series])
        let document = SVGDocument(drawn.svg())
        #expect(document.error == nil)
        // A decade below the smallest positive value's, so zero stands apart from 0.05.
        #expect(document.texts.contains("0.001"))
        #expect(drawn.position(of: ChartPoint(x: 0, y: 0)).y == drawn.position(of: ChartPoint(x: 0, y: 0.001)).y)
        #expect(drawn.position(of: ChartPoint(x: 1, y: -2)).y == drawn.position(of: ChartPoint(x: 0, y: 0.001)).y)
        #expect(drawn.position(of: ChartPoint(x: 0, y: 0)).y > drawn.position(of: ChartPoint(x: 0, y: 0.05)).y)
        #expect(document.polylines.first?.count == 4)
    }

    @Test func aLinearTimeAxisHasRoundTicks() {
        let series = ChartSeries(name: "p1", colour: "#2ca02c", points: (0...58).map { ChartPoint(x: Double($0), y: Double($0 % 3) - 1) })
        let document = SVGDocument(chart([series], y: .linear).svg())
        #expect(document.error == nil)
        for label in ["0", "10", "20", "30", "40", "50", "60"] {
            #expect(document.texts.contains(label), "no tick labelled \(label)")
        }
        #expect(document.texts.contains("-1.0"))
        #expect(document.texts.contains("0.0"))
        #expect(!document.texts.contains("-0.0"))
    }

    @Test(arguments: [
        [],
        [ChartSeries(name: "tandem", colour: "#1f77b4", points: [])],
        [ChartSeries(name: "tandem", colour: "#1f77b4", points: [ChartPoint(x: .nan, y: 1), ChartPoint(x: 1, y: .infinity)])],
    ])
    func noDataStillDrawsAValidSVGSayingSo(series: [ChartSeries]) {
        let document = SVGDocument(chart(series).svg())
        #expect(document.error == nil)
        #expect(document.root == "svg")
        #expect(document.texts.contains("no data"))
        #expect(document.polylines.isEmpty)
    }

    @Test func aSinglePointIsDrawnAsADot() {
        let document = SVGDocument(chart([ChartSeries(name: "one", colour: "#1f77b4", points: [ChartPoint(x: 3, y: 0.2)])]).svg())
        #expect(document.error == nil)
        #expect(document.elements.contains { $0.name == "circle" })
        #expect(!document.texts.contains("no data"))
    }

    @Test func textIsEscaped() throws {
        let title = "a <b> & \"c\" 'd'"
        let svg = SVGChart(title: title, x: ChartAxis(title: "x < 1"), y: ChartAxis(title: "y & z"),
                           series: [ChartSeries(name: "<tandem>", colour: "#1f77b4", points: [ChartPoint(x: 0, y: 1), ChartPoint(x: 1, y: 2)])],
                           caption: "no clock > none").svg()
        #expect(!svg.contains("<b>"))
        let document = SVGDocument(svg)
        #expect(document.error == nil)
        #expect(document.titles.first == title)
        #expect(document.texts.contains(title))
        #expect(document.texts.contains("x < 1"))
        #expect(document.texts.contains("y & z"))
        #expect(document.texts.contains("<tandem>"))
        #expect(document.texts.contains("no clock > none"))
    }

    @Test func aDistributionRisesToOneHundredPercent() {
        let series = ChartSeries.distribution(name: "tandem", colour: "#1f77b4", values: [3, 1, .nan, 2])
        #expect(series.points.map(\.x) == [1, 2, 3])
        #expect(series.points.map(\.y).map { ($0 * 10).rounded() / 10 } == [33.3, 66.7, 100])
    }

    @Test func eachScenarioChartShowsWhatItSays() throws {
        let scenario = ReportFixture.steady
        let spread = SVGDocument(ScenarioChart.spread.chart(of: scenario).svg())
        #expect(spread.error == nil)
        #expect(spread.elements.filter { $0.name == "polyline" }.map { $0.attributes["stroke"] } == ["#d62728", "#1f77b4"])
        #expect(spread.texts.contains("apply on receipt (p99 31.4 ms)"))
        #expect(spread.texts.contains("tandem (p99 0.148 ms)"))

        let clock = SVGDocument(ScenarioChart.clock.chart(of: scenario).svg())
        #expect(clock.error == nil)
        #expect(clock.polylines.count == 3)
        #expect(clock.texts.contains("p1") && clock.texts.contains("p3"))
        #expect(clock.texts.contains { $0.contains("baseline") && $0.contains("no clock") })

        let distribution = ScenarioChart.distribution.chart(of: scenario)
        #expect(distribution.x.scale == .logarithmic)
        let parsed = SVGDocument(distribution.svg())
        #expect(parsed.error == nil)
        #expect(parsed.polylines.count == 2)
        #expect(parsed.texts.contains("100"))
    }
}
