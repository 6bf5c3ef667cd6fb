import Testing
@testable import TandemMedia

/// The wall's layout and drawing, pure: how many tiles a row, and each picture's rows placed at
/// its tile's corner.
@Suite struct TerminalWallTests {
    @Test(arguments: [(1, 1, 1), (2, 2, 1), (3, 2, 2), (4, 2, 2), (5, 3, 2), (6, 3, 2), (7, 3, 3), (9, 3, 3)])
    func tilesFillTheFewestRowsOfAtMostAsManyColumns(tiles: Int, columns: Int, rows: Int) {
        #expect(TerminalWall.grid(tiles: tiles) == (columns, rows))
    }

    @Test func aPictureIsDrawnFromItsTilesCornerOneTextRowPerTwoPixelRows() {
        // 2×4 pixels: two text rows of two cells, red over green, then blue over white.
        let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255], white: [UInt8] = [255, 255, 255]
        let image = RGBImage(width: 2, height: 4, pixels: red + red + green + green + blue + blue + white + white)
        let text = TerminalWall.render(image, row: 13, column: 41)
        #expect(text.hasPrefix("\u{1B}[13;41H\u{1B}[38;2;255;0;0m\u{1B}[48;2;0;255;0m▀"))
        #expect(text.contains("\u{1B}[14;41H\u{1B}[38;2;0;0;255m\u{1B}[48;2;255;255;255m▀"))
        #expect(!text.contains("\u{1B}[15;"))
        #expect(text.components(separatedBy: "▀").count - 1 == 4)
    }
}
