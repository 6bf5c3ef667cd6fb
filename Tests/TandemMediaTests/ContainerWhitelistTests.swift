import Foundation
import Testing
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMediaTypes

/// Every input opens only through the demuxers of `MediaFile.containerFormats`: a text file,
/// which FFmpeg's `tty` demuxer would present as a video, is refused with one clear line, while
/// the sample media and the containers the tests make still open.
@Suite struct ContainerWhitelistProcessTests {
    static let text = Array(String(repeating: "just some notes, not a movie\n", count: 200).utf8)

    @Test("a text file is refused as not a media container, whatever text extension it has", arguments: ["txt", "nfo", "diz", "asc"])
    func textIsRefused(fileExtension: String) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("notes.\(fileExtension)", Self.text)
        // Without the whitelist FFmpeg would take it: its probe names the text demuxer.
        #expect(MediaFile.probedFormat(path) == "tty")
        let error = #expect(throws: MediaError.self) { try MediaFile(url: path) }
        #expect(error?.isNotContainer == true, "\(String(describing: error))")
        #expect(error?.description == "\(path) is not a supported media container (FFmpeg would read it as 'tty')")
        #expect(throws: MediaError.self) { try HeadlessPlayer(url: path) }
        #expect(throws: MediaError.self) { try MediaFile(item: PlaybackItem(file: path, identifier: "notes")) }
    }

    @Test("text streamed as a byte source is refused too")
    func streamedTextIsRefused() throws {
        let error = #expect(throws: MediaError.self) {
            try MediaFile(item: PlaybackItem(bytes: MemoryByteSource(Self.text), identifier: "notes.txt"))
        }
        #expect(error != nil)
    }

    @Test("the sample media still opens", arguments: SampleClip.videoClips + [SampleClip.audioOnly])
    func samplesOpen(clip: SampleClip) throws {
        let file = try MediaFile(url: clip.path)
        #expect(MediaFile.isContainer(file.info.container), "\(file.info.container)")
        #expect(file.info.video != nil || file.info.audio != nil)
    }

    @Test("the containers tests make still open: MPEG-TS, Matroska, WAV, MP3, FLAC, Ogg", arguments: [
        ("clip.ts", ["-c", "copy", "-f", "mpegts"]), ("clip.mkv", ["-c", "copy"]), ("clip.wav", ["-vn", "-c:a", "pcm_s16le"]),
        ("clip.mp3", ["-vn", "-c:a", "libmp3lame"]), ("clip.flac", ["-vn", "-c:a", "flac"]), ("clip.ogg", ["-vn", "-c:a", "libopus"]),
    ])
    func madeContainersOpen(name: String, arguments: [String]) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.ffmpeg(["-i", SampleClip.h264.path] + arguments, output: name)
        let file = try MediaFile(url: path)
        #expect(file.info.audio != nil)
    }

    @Test("a demuxer name list matches when any of its names is on the whitelist")
    func containerNames() {
        #expect(MediaFile.isContainer("mov,mp4,m4a,3gp,3g2,mj2"))
        #expect(MediaFile.isContainer("matroska,webm"))
        for refused in ["tty", "ansi", "bintext", "idf", "xbin", "adf", "image2", "srt", "webm_dash_manifest", "h264"] {
            #expect(!MediaFile.isContainer(refused), "\(refused)")
        }
    }
}
