// swift-tools-version:6.0
// Tandem: synchronized media playback for Swift on Linux. See README.md and DESIGN notes.
import PackageDescription

/// The FFmpeg libraries the media layer links, as Debian names their development packages.
let ffmpegPackages = ["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"]

let package = Package(
    name: "Tandem",
    products: [
        .executable(name: "tandem", targets: ["TandemCLI"]),
        .library(name: "TandemClock", targets: ["TandemClock"]),
        .library(name: "TandemWire", targets: ["TandemWire"]),
        .library(name: "TandemNet", targets: ["TandemNet"]),
    ],
    targets: [
        // C shims: FFmpeg's macros as functions, and the few libc calls Swift cannot import.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(ffmpegPackages)]
        ),
        .systemLibrary(name: "CTandemSystem"),

        // Clock sampling and estimation: pure values, no I/O.
        .target(name: "TandemClock"),
        // Datagram and message encodings, versioned.
        .target(name: "TandemWire", dependencies: ["TandemClock"]),
        // POSIX sockets, the time service and the clock prober.
        .target(name: "TandemNet", dependencies: ["TandemWire", "TandemClock"]),

        // Virtual time, a simulated network and fixtures shared by tests and benchmarks.
        .target(name: "TandemTestKit", dependencies: ["TandemClock", "TandemWire"]),
        // Benchmarks as library code; `tandem bench` runs them.
        .target(name: "TandemBench", dependencies: ["TandemClock", "TandemWire", "TandemNet", "TandemTestKit"]),

        // The `tandem` command: argument parsing and wiring only.
        .executableTarget(name: "TandemCLI", dependencies: ["TandemClock", "TandemNet", "TandemBench"]),

        .testTarget(name: "TandemClockTests", dependencies: ["TandemClock", "TandemWire", "TandemTestKit", "TandemBench"]),
        .testTarget(name: "TandemNetTests", dependencies: ["TandemNet", "TandemWire", "TandemClock", "TandemTestKit"]),

    ],
    swiftLanguageModes: [.v6]
)
