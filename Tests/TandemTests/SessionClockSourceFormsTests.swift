import Testing
import Tandem
import TandemClock

/// `SessionClockSource`'s typed forms against the bare forms in nanoseconds: a source written
/// against either reads the same through both.
@Suite struct SessionClockSourceFormsTests {
    /// A source written against the bare forms: session time is local time plus a second.
    struct BareSource: SessionClockSource {
        func sessionTime(atLocal localTime: Int64) -> Int64? { localTime + 1_000_000_000 }
        func localTime(atSession sessionTime: Int64) -> Int64? { sessionTime - 1_000_000_000 }
        func errorBound(atLocal localTime: Int64) -> Int64? { 250 }
        func roundTrip(atLocal localTime: Int64) -> Int64? { 40_000 }
        func sessionSecondsPerLocalSecond(atLocal localTime: Int64) -> Double? { 1.0001 }
        func stop() {}
    }

    /// The same source written against the typed forms, without the optional ones.
    struct TypedSource: SessionClockSource {
        func sessionTime(atLocal local: LocalInstant) -> SessionInstant? {
            SessionInstant(nanoseconds: local.nanoseconds) + .seconds(1)
        }
        func localTime(atSession session: SessionInstant) -> LocalInstant? {
            LocalInstant(nanoseconds: (session - .seconds(1)).nanoseconds)
        }
        func errorBound(atLocal local: LocalInstant) -> TimeSpan? { TimeSpan(nanoseconds: 250) }
        func stop() {}
    }

    @Test func aBareSourceReadsTheSameThroughTheTypedForms() {
        let source: any SessionClockSource = BareSource()
        let local = LocalInstant(nanoseconds: 5_000)
        #expect(source.sessionTime(atLocal: local) == SessionInstant(nanoseconds: 1_000_005_000))
        #expect(source.localTime(atSession: SessionInstant(nanoseconds: 1_000_005_000)) == local)
        #expect(source.errorBound(atLocal: local) == TimeSpan(nanoseconds: 250))
        #expect(source.roundTrip(atLocal: local) == .microseconds(40))
        #expect(source.sessionSecondsPerLocalSecond(atLocal: local) == 1.0001)
    }

    @Test func aTypedSourceReadsTheSameThroughTheBareForms() {
        let source: any SessionClockSource = TypedSource()
        #expect(source.sessionTime(atLocal: Int64(5_000)) == 1_000_005_000)
        #expect(source.localTime(atSession: Int64(1_000_005_000)) == 5_000)
        #expect(source.errorBound(atLocal: Int64(5_000)) == 250)
    }

    @Test func aSourceWithoutTheOptionalFormsHasNone() {
        let source: any SessionClockSource = TypedSource()
        #expect(source.roundTrip(atLocal: LocalInstant.zero) == nil)
        #expect(source.sessionSecondsPerLocalSecond(atLocal: LocalInstant.zero) == nil)
        #expect(source.roundTrip(atLocal: Int64(0)) == nil)
        #expect(source.observeChanges { } == false)
    }
}
