import Testing
import Synchronization
@testable import Tandem

/// A published value whose assignments an interceptor takes, many times over.
@Suite struct PublishedInterceptorTests {
    /// An assignment that left the interceptor one conversion deeper every time would overflow
    /// the stack within 300,000 of them.
    @Test func interceptsAtTheSameDepthHoweverManyAssignments() {
        let storage = PublishedStorage(0)
        let taken = Mutex(0)
        storage.interceptAssignments { value in
            taken.withLock { $0 += value }
            return true
        }
        var allTaken = true
        for _ in 0..<300_000 { allTaken = storage.intercept(1) && allTaken }
        #expect(allTaken)
        #expect(taken.withLock { $0 } == 300_000)
    }
}
