import Testing
@testable import TandemMedia

/// The ring between the sound output's thread and its log's: records in order, a full ring
/// leaving records out (counted) rather than making the output wait.
@Suite struct AudioLogRingTests {
    static func record(_ index: Int) -> AudioLogRing.Record {
        AudioLogRing.Record(kind: .missing, at: Int64(index), value: Int64(index * 2))
    }

    @Test func recordsComeOutOnceInTheOrderTheyWentIn() {
        let ring = AudioLogRing(capacity: 8)
        for index in 0..<5 { #expect(ring.put(Self.record(index))) }
        var taken: [Int64] = []
        #expect(ring.take { taken.append($0.at) } == 5)
        #expect(taken == [0, 1, 2, 3, 4])
        #expect(ring.take { _ in Issue.record("taken twice") } == 0)
        // Round and round: indices past the capacity wrap onto the same slots.
        taken = []
        for round in 0..<10 {
            for index in 0..<6 { ring.put(Self.record(round * 6 + index)) }
            ring.take { taken.append($0.at) }
        }
        #expect(taken == (0..<60).map(Int64.init))
        #expect(ring.takeDropped() == 0)
    }

    @Test func aFullRingLeavesRecordsOutAndCountsThemWithoutWaiting() {
        let ring = AudioLogRing(capacity: 4)
        let accepted = (0..<10).map { ring.put(Self.record($0)) }
        #expect(accepted == [true, true, true, true, false, false, false, false, false, false])
        #expect(ring.takeDropped() == 6)
        #expect(ring.takeDropped() == 0, "counted afresh after each reading")
        var taken: [Int64] = []
        ring.take { taken.append($0.at) }
        #expect(taken == [0, 1, 2, 3], "the records kept are the first ones, whole")
        #expect(ring.put(Self.record(10)), "room again once read")
    }

    @Test func aWritesItemIsHandedOverWhole() {
        let ring = AudioLogRing(capacity: 2)
        let item = String(repeating: "long item name ", count: 4)
        for index in 0..<3 {
            ring.put(AudioLogRing.Record(kind: .write, at: 0, intended: 1, expected: 2, media: Double(index), frames: 480,
                                         rate: 1, correction: 1e-5, lead: 3, item: item))
            var seen: [AudioLogRing.Record] = []
            ring.take { seen.append($0) }
            #expect(seen.count == 1 && seen[0].item == item && seen[0].media == Double(index) && seen[0].frames == 480)
        }
    }

    /// The lines the log's thread writes for each kind, which `tandem bench audio` reads.
    @Test func eachRecordBecomesTheLineTheBenchReads() {
        let write = AudioLogRing.Record(kind: .write, at: 0, intended: 100, expected: 105, media: 480.5, frames: 96,
                                        rate: 1, correction: 2.5e-5, lead: 40_000_000, item: "a\"b")
        #expect(AudioLog.line(write) == #"{"kind":"write","item":"a\"b","media":480.5,"intended":100,"expected":105,"frames":96,"#
            + #""rate":1.0,"correction":25.0,"lead":40000000}"# + "\n")
        #expect(AudioLog.line(.init(kind: .snap, at: 7, value: -30)) == #"{"kind":"snap","at":7,"error":-30}"# + "\n")
        #expect(AudioLog.line(.init(kind: .underrun, at: 8)) == #"{"kind":"underrun","at":8}"# + "\n")
        #expect(AudioLog.line(.init(kind: .missing, at: 9, value: 12)) == #"{"kind":"missing","at":9,"frames":12}"# + "\n")
        #expect(AudioLog.line(.init(kind: .latency, at: 10, value: 5)) == #"{"kind":"latency","at":10,"latency":5}"# + "\n")
        #expect(AudioLog.line(.init(kind: .busy, at: 11)) == #"{"kind":"busy","at":11}"# + "\n")
        #expect(AudioLog.line(.init(kind: .priority, at: 12)) == #"{"kind":"priority","at":12,"realtime":true,"errno":0}"# + "\n")
        #expect(AudioLog.line(.init(kind: .priority, at: 13, value: 1)) == #"{"kind":"priority","at":13,"realtime":false,"errno":1}"# + "\n")
    }
}
