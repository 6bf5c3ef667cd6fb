import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG document as `XMLParser` read it: whether it parsed, its elements with their
/// attributes, and the text of its `<text>` and `<title>` elements.
final class SVGDocument: NSObject, XMLParserDelegate {
    /// The parser's error, nil when the document is well-formed.
    private(set) var error: Error?
    /// Every element, in document order: its name and attributes.
    private(set) var elements: [(name: String, attributes: [String: String])] = []
    /// The text of every `<text>` element, in order.
    private(set) var texts: [String] = []
    /// The text of every `<title>` element, in order.
    private(set) var titles: [String] = []
    private var buffer: String?

    /// Parses `source`.
    init(_ source: String) {
        super.init()
        let parser = XMLParser(data: Data(source.utf8))
        parser.delegate = self
        if !parser.parse() {
            error = parser.parserError ?? CocoaError(.coderReadCorrupt)
        }
    }

    /// The root element's name.
    var root: String? { elements.first?.name }

    /// Every polyline's points, as (x, y) pixel pairs.
    var polylines: [[(x: String, y: String)]] {
        elements.filter { $0.name == "polyline" }.map { element in
            (element.attributes["points"] ?? "").split(separator: " ").map { pair in
                let parts = pair.split(separator: ",")
                return (String(parts[0]), String(parts[1]))
            }
        }
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        elements.append((elementName, attributes))
        if elementName == "text" || elementName == "title" { buffer = "" }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        buffer? += string
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let text = buffer else { return }
        if elementName == "text" { texts.append(text) }
        if elementName == "title" { titles.append(text) }
        buffer = nil
    }
}
