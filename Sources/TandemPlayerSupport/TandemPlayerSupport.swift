// What both players share is in two modules: TandemMediaTypes (MediaError, MediaLocation,
// PresentationLog and PresentationRecord, JSONValue) and TandemClock (typed time, MediaTime).
// This module re-exports both, so that code that imports TandemPlayerSupport compiles
// unchanged; new code imports the two modules themselves.
@_exported import TandemClock
@_exported import TandemMediaTypes
