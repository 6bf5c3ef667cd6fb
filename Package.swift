// swift-tools-version:6.0
// Tandem: synchronized media playback for Swift on Linux. See README.md and DESIGN notes.
import PackageDescription

/// The FFmpeg libraries the media layer links, as Debian names their development packages.
let ffmpegPackages = ["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"]

let package = Package(
    name: "Tandem",
    products: [
        .library(name: "TandemMedia", targets: ["TandemMedia"]),
        .executable(name: "tandem", targets: ["TandemCLI"]),
    ],
    targets: [
        // C shims: FFmpeg's macros as functions, and the few libc calls Swift cannot import.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(ffmpegPackages)]
        ),
        .systemLibrary(name: "CTandemSystem"),

        // media: the FFmpeg-backed headless player.
        .target(name: "TandemMedia", dependencies: ["CFFmpeg", "CTandemSystem"]),

        // bench: scenarios, recorders and reports.
        .target(name: "TandemBench", dependencies: ["TandemMedia"]),

        // Test support shared by the tests and the benchmarks.
        .target(name: "TandemTestKit", dependencies: ["TandemMedia"]),

        // The `tandem` command: argument parsing and wiring only.
        .executableTarget(name: "TandemCLI", dependencies: ["TandemMedia", "TandemBench"]),

        .testTarget(name: "TandemMediaTests", dependencies: ["TandemMedia", "TandemTestKit"]),
        .testTarget(name: "TandemCLITests", dependencies: ["TandemMedia", "TandemTestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
