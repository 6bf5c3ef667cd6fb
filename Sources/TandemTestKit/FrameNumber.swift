import TandemMedia

/// Reads the frame number that Tandem's sample clips carry in a strip along their top edge:
/// 16 blocks of 20 x 16 pixels, bit i of the number in block i (least significant on the left),
/// white for 1 and black for 0.
public enum FrameNumber {
    /// The number shown by `image` (decoded at the clip's own size).
    public static func read(_ image: RGBImage) -> Int {
        var number = 0
        for bit in 0..<16 where (bit + 1) * 20 <= image.width {
            // The middle of each block, away from edges that the codec blurs.
            if image.meanLuma(x: bit * 20 + 5, y: 4, width: 10, height: 8) > 128 {
                number |= 1 << bit
            }
        }
        return number
    }

    /// The number shown by a decoded frame.
    public static func read(_ frame: VideoFrame) throws -> Int {
        try read(frame.rgbImage())
    }
}
