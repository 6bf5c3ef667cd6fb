import TandemMediaTypes

/// A JSON value as mpv's IPC sends and takes it: command arguments, property values, event
/// fields. The one JSON tree of the package (`JSONValue`).
public typealias MpvValue = JSONValue
