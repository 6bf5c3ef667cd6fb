// swift-tools-version:6.0
// Tandem: synchronized media playback for Swift on Linux. See README.md and docs/ARCHITECTURE.md.
import PackageDescription

/// The FFmpeg libraries the media layer links, as Debian names their development packages.
let ffmpegPackages = ["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"]

let package = Package(
    name: "Tandem",
    products: [
        .library(name: "Tandem", targets: ["Tandem"]),
        .library(name: "TandemPlayback", targets: ["TandemPlayback"]),
        .library(name: "TandemMedia", targets: ["TandemMedia"]),
        .library(name: "TandemMpv", targets: ["TandemMpv"]),
        .library(name: "TandemMediaTypes", targets: ["TandemMediaTypes"]),
        .library(name: "TandemPlayerSupport", targets: ["TandemPlayerSupport"]),
        .library(name: "TandemIdentity", targets: ["TandemIdentity"]),
        .library(name: "TandemClock", targets: ["TandemClock"]),
        .library(name: "TandemWire", targets: ["TandemWire"]),
        .library(name: "TandemNet", targets: ["TandemNet"]),
        .library(name: "TandemNATS", targets: ["TandemNATS"]),
        .library(name: "TandemCluster", targets: ["TandemCluster"]),
        .library(name: "TandemParty", targets: ["TandemParty"]),
        .library(name: "TandemAVFoundation", targets: ["TandemAVFoundation"]),
        .executable(name: "tandem", targets: ["TandemCLI"]),
    ],
    targets: [
        // C shims: FFmpeg's macros as functions, libsodium, and the few libc calls Swift cannot import.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(ffmpegPackages)]
        ),
        .systemLibrary(name: "CTandemSystem"),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // PulseAudio's client library (Debian's libpulse-dev): the built-in player's sound output
        // (PipeWire speaks its protocol too). Its headers are on the default path; no pkg-config,
        // whose flags for it (-pthread, -D_REENTRANT) SwiftPM refuses with a warning.
        .systemLibrary(name: "CPulse"),

        // clock: typed time, clock sampling and estimation, the system's clocks; with the players'
        // nanoseconds, media time in seconds and the monotonic clock.
        .target(name: "TandemClock"),
        // Content identity (size and hashes) and media lists: no FFmpeg.
        .target(name: "TandemIdentity"),
        // wire: datagram and message encodings, versioned.
        .target(name: "TandemWire", dependencies: ["TandemClock"]),
        // net: POSIX sockets, the event loop, the time service and the clock prober; the relay
        // (its pure core, its server, the participant's link, the in-memory relay).
        .target(name: "TandemNet", dependencies: ["TandemWire", "TandemClock", "CSodium", "CTandemSystem"]),
        // NATS: a NATS client and JetStream on net's event loop and sockets; beside the relay, which
        // never links it.
        .target(name: "TandemNATS", dependencies: ["TandemNet", "TandemClock"]),
        // cluster: relays that share sessions through NATS JetStream (`tandem serve --nats`) and
        // the cluster's session time; the relay core's cluster mode carried to NATS.
        .target(name: "TandemCluster", dependencies: ["TandemNet", "TandemNATS", "TandemWire", "TandemClock"]),

        // sessions: the public GroupActivities-style API (activities, sessions, messenger, journal).
        .target(name: "Tandem", dependencies: ["TandemNet", "TandemWire", "TandemClock", "CSodium"]),

        // playback: the shared timeline and the playback coordinator.
        .target(name: "TandemPlayback", dependencies: ["Tandem", "TandemClock", "TandemNet"]),

        // The media types both players speak, with no FFmpeg: `MediaError`, `MediaLocation`, the
        // presentation log and its records, `JSONValue`, and the worker threads they run on.
        .target(name: "TandemMediaTypes", dependencies: ["CTandemSystem"]),
        // Source compatibility: re-exports TandemMediaTypes and TandemClock, which hold what this
        // module held; nothing in the package imports it but a test of that.
        .target(name: "TandemPlayerSupport", dependencies: ["TandemMediaTypes", "TandemClock"]),
        // media: the FFmpeg-backed headless player.
        .target(name: "TandemMedia", dependencies: ["CFFmpeg", "CPulse", "CTandemSystem", "TandemPlayback", "TandemClock", "TandemNet", "TandemIdentity", "TandemMediaTypes"]),
        // mpv: the mpv backend over its JSON IPC (the socket comes from net); links no FFmpeg.
        .target(name: "TandemMpv", dependencies: ["CTandemSystem", "TandemPlayback", "TandemClock", "TandemNet", "TandemIdentity", "TandemMediaTypes"]),

        // streaming: a joiner without the file reads it from a holder, sealed through the session;
        // a loopback HTTP server hands the same bytes to mpv.
        .target(name: "TandemStreaming", dependencies: ["Tandem", "TandemPlayback", "TandemIdentity"]),

        // party: a watch party as one library type, and its typed `Codable` events.
        .target(name: "TandemParty", dependencies: ["Tandem", "TandemPlayback", "TandemMedia", "TandemMpv", "TandemMediaTypes", "TandemClock", "TandemStreaming", "TandemIdentity"]),

        // AVFoundation's, Core Media's and GroupActivities' names over Tandem's (`AVPlayer`,
        // `AVPlaybackCoordinator`, `CMTime`…), for code written for Apple with only its imports
        // changed; re-exports what it names. Nothing in the package imports it but its tests.
        .target(name: "TandemAVFoundation", dependencies: ["Tandem", "TandemPlayback", "TandemMedia", "TandemMediaTypes", "TandemClock"]),

        // The user-space network impairment proxy (`tandem netsim`): a pure schedule and its shell.
        .target(name: "TandemNetsim", dependencies: ["TandemNet", "TandemClock", "CTandemSystem"]),

        // harness: what the shipped benchmarks run and measure with (process runners, nats-server
        // and Xvfb launchers, resident memory, the clock simulation on virtual time, the watch-party
        // events read back from a process's output).
        .target(name: "TandemHarness", dependencies: ["TandemClock", "TandemWire", "TandemNet", "TandemMpv", "TandemParty"]),
        // The test kit, linked by tests only (never by `tandem`): virtual event loops, simulated relays,
        // fixtures, waits on published values.
        .target(name: "TandemTestKit", dependencies: ["TandemClock", "TandemWire", "TandemNet", "TandemNetsim", "Tandem", "TandemMedia", "TandemMediaTypes", "TandemHarness", "TandemMpv"]),
        // bench: benchmarks as library code; `tandem bench` runs them.
        .target(name: "TandemBench", dependencies: ["CPulse", "TandemClock", "TandemWire", "TandemNet", "TandemNATS", "TandemCluster", "TandemMedia", "TandemMpv", "TandemMediaTypes", "TandemHarness", "TandemNetsim", "Tandem", "TandemPlayback", "TandemParty"]),

        // The `tandem` command: argument parsing and wiring only.
        .executableTarget(name: "TandemCLI", dependencies: ["Tandem", "TandemPlayback", "TandemClock", "TandemNet", "TandemNATS", "TandemCluster", "TandemMedia", "TandemMpv", "TandemMediaTypes", "TandemBench", "TandemNetsim", "TandemIdentity", "TandemStreaming", "TandemParty"]),

        .testTarget(name: "TandemClockTests", dependencies: ["TandemClock", "TandemWire", "TandemTestKit", "TandemBench", "TandemHarness"]),
        .testTarget(name: "TandemNetTests", dependencies: ["TandemNet", "TandemWire", "TandemClock", "TandemTestKit", "TandemHarness"]),
        .testTarget(name: "TandemPlaybackTests", dependencies: ["TandemPlayback", "Tandem", "TandemNet", "TandemClock", "TandemMedia", "TandemMediaTypes", "TandemTestKit", "TandemHarness", "TandemAVFoundation"]),
        .testTarget(name: "TandemTests", dependencies: ["Tandem", "TandemNet", "TandemTestKit", "TandemHarness"]),
        .testTarget(name: "TandemMediaTests", dependencies: ["TandemMedia", "TandemMediaTypes", "TandemClock", "TandemPlayerSupport", "TandemTestKit", "TandemHarness", "TandemAVFoundation"]),
        // A relay that shows one participant a different history, run as its own process by the
        // tests that catch one; never part of `tandem`.
        .executableTarget(name: "TandemDivergentRelay", dependencies: ["TandemNet", "TandemWire"], path: "Tests/Doubles/DivergentRelay"),
        .testTarget(name: "TandemCLITests", dependencies: ["TandemCLI", "TandemDivergentRelay", "TandemMedia", "TandemMpv", "TandemMediaTypes", "TandemClock", "TandemTestKit", "TandemBench", "TandemIdentity", "TandemHarness"]),
        // Streaming: its pure cores on virtual time, the HTTP server, and two sessions on a real relay.
        .testTarget(name: "StreamingTests", dependencies: ["TandemStreaming", "TandemMpv", "Tandem", "TandemNet", "TandemIdentity", "TandemPlayback", "TandemTestKit"]),
        // The party's events: every kind decoded from a recorded line and written back the same.
        .testTarget(name: "TandemPartyTests", dependencies: ["TandemParty", "TandemPlayback", "Tandem", "TandemClock", "TandemNet", "TandemTestKit"]),
        // The suite's report: its JSON, Markdown, SVG charts and HTML page, from hand-built reports.
        .testTarget(name: "TandemBenchTests", dependencies: ["TandemBench", "TandemMediaTypes", "TandemHarness", "TandemParty", "TandemTestKit", "TandemMedia", "TandemMpv", "TandemPlayback", "Tandem", "TandemClock", "TandemNet"]),
        // The mpv backend with a real headless mpv: its IPC, the no-echo ledger, and mpv in a group.
        .testTarget(name: "MpvTests", dependencies: ["TandemMpv", "TandemIdentity", "TandemMediaTypes", "TandemMedia", "TandemPlayback", "Tandem", "TandemClock", "TandemNet", "TandemTestKit"]),
        // The relay transport: wire fuzzing, the pure core, and the same bodies in memory and on loopback.
        .testTarget(name: "RelayTests", dependencies: ["TandemNet", "TandemWire", "TandemClock", "TandemTestKit", "TandemHarness"]),
        // The cluster relay and its session time: pure cores on virtual time, then relays over a real
        // nats-server started by the test kit.
        .testTarget(name: "ClusterTests", dependencies: ["TandemCluster", "TandemNATS", "TandemNet", "TandemWire", "TandemClock", "TandemTestKit", "TandemHarness"]),
        // The NATS client and JetStream: the parser and connection core on virtual time, then a
        // real nats-server (one node, and a three-node cluster) started by the test kit.
        .testTarget(name: "NATSTests", dependencies: ["TandemNATS", "TandemNet", "TandemTestKit", "TandemHarness"]),
        // The impairment proxy: its pure schedule, and the shell on loopback with echo servers and the real relay.
        .testTarget(name: "NetsimTests", dependencies: ["TandemNetsim", "TandemNet", "TandemClock"]),

        // SharePlay's documented patterns, GroupActivities code with only the import changed, end to
        // end on the in-memory relay (see NOTE.md there for every line that differs, and why).
        .testTarget(name: "SharePlayCompatibilityTests", dependencies: ["Tandem", "TandemTestKit"], exclude: ["NOTE.md"]),

        // Samples: the SharePlay patterns as small programs over the public API (`swift run NAME`).
        // What every sample shares: reading `--relay` and `--name`, an embedded relay, input lines.
        .target(name: "SampleSupport", dependencies: ["Tandem", "TandemNet"], path: "Samples/SampleSupport"),
        .executableTarget(name: "ShowAlert", dependencies: ["Tandem", "SampleSupport"], path: "Samples/ShowAlert", exclude: ["README.md"]),
        .executableTarget(name: "DrawTogether", dependencies: ["Tandem", "SampleSupport"], path: "Samples/DrawTogether", exclude: ["README.md"]),
        .executableTarget(name: "QuizNight", dependencies: ["Tandem", "SampleSupport"], path: "Samples/QuizNight", exclude: ["README.md"]),
        .executableTarget(name: "SharedPhotos", dependencies: ["Tandem", "SampleSupport"], path: "Samples/SharedPhotos", exclude: ["README.md"]),
        .executableTarget(name: "WatchTogether", dependencies: ["Tandem", "TandemClock", "TandemPlayback", "TandemMedia", "TandemParty", "SampleSupport"],
                          path: "Samples/WatchTogether", exclude: ["README.md"]),
        // Each sample run end to end as separate processes on loopback.
        .testTarget(name: "SamplesTests", dependencies: ["TandemTestKit", "ShowAlert", "DrawTogether", "QuizNight", "SharedPhotos", "WatchTogether", "TandemHarness"]),
    ],
    swiftLanguageModes: [.v6]
)
