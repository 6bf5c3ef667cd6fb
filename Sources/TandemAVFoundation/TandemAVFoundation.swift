// AVFoundation's, Core Media's and GroupActivities' names over Tandem's own, for code written for
// Apple platforms: where such a file has `import AVFoundation`, `import CoreMedia` and
// `import GroupActivities`, it has `import TandemAVFoundation` (which also re-exports Tandem, so
// `import Tandem` may stay or go). Tandem's own names (`HeadlessPlayer`, `PlaybackCoordinator`,
// `ItemTime`) stay the primary ones: nothing in the package imports this module but its tests,
// and `scripts/check-layers` keeps it so. The porting table ("Porting from SharePlay") says which
// of Apple's names are here and why the others are not.
@_exported import Foundation
@_exported import Tandem
@_exported import TandemClock
@_exported import TandemMedia
@_exported import TandemMediaTypes
@_exported import TandemPlayback
