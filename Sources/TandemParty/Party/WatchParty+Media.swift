import Foundation
import TandemIdentity
import TandemMedia
import TandemMediaTypes
import TandemPlayback

/// Media checked before anything starts, so that what cannot be played fails in one clear line.
extension WatchParty {
    /// Opens `file` once; returns its content identity with the duration the built-in player's
    /// demuxer read announced in it, and that duration (s).
    @discardableResult
    public static func checkedMedia(_ file: String) throws(WatchPartyError) -> (identity: String, duration: Double?) {
        do {
            let duration = try MediaFile(url: file).info.duration
            return (ContentIdentity.announcing(duration: duration, try ContentIdentity.of(file: file)), duration)
        } catch let error as MediaError {
            throw .failure(error.description)
        } catch {
            throw .failure("cannot read \(file): \(error)")
        }
    }

    /// Opens the `http(s)` item at `url` once (FFmpeg limited to `MediaFile.webProtocols`).
    public static func checkedURL(_ url: String) throws(WatchPartyError) {
        guard let parsed = webURL(url), let item = try? PlaybackItem(url: parsed) else {
            throw .usage("'\(url)' is not an http(s) URL")
        }
        do {
            _ = try MediaFile(item: item)
        } catch {
            throw .failure("\(error)")
        }
    }

    /// Opens each of this participant's local files once (`MediaFile(url:)`, its demuxers limited
    /// to `MediaFile.containerFormats`), so that nothing the built-in player would refuse, a text
    /// file above all, is served to others or handed to mpv.
    func vetMedia() throws(WatchPartyError) {
        for path in watchedMedia where !path.isEmpty && Self.webURL(path) == nil {
            do {
                _ = try MediaFile(url: path)
            } catch {
                throw .failure(error.description)
            }
        }
    }
}
