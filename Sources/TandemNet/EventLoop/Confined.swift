#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A value that belongs to one thread of execution, an event loop's or a thread's own: read and
/// changed only there (or while nothing runs there: before it starts, after it stops, between a
/// test's advances), which every access asserts in debug builds, as swift-nio's
/// `NIOLoopBoundBox` does.
///
/// A shell keeps each of its confined fields in one of these, and is then `Sendable` with no
/// claim of its own: the claim is made here, once, and checked at every access rather than
/// written in a comment. One box a field, so that changing one field never overlaps an access to
/// another (a delegate called while a core is being changed may read the rest). The check costs
/// nothing in release builds.
///
/// Unchecked: `value` is touched only where `confinement` allows, which each access asserts.
package final class Confined<Value>: @unchecked Sendable {
    /// Where the value may be touched.
    package let confinement: any Confinement
    private var storage: Value

    /// `value`, which from now on belongs to `confinement`.
    package init(_ value: sending Value, to confinement: any Confinement) {
        self.confinement = confinement
        storage = value
    }

    /// The value. Where the confinement allows.
    package var value: Value {
        get {
            assert(allowed)
            return storage
        }
        _modify {
            assert(allowed)
            yield &storage
        }
    }

    /// Whether the caller may touch the value now; it traps, in debug builds, when it may not.
    private var allowed: Bool {
        confinement.preconditionConfined("Confined.value", file: #fileID, line: #line)
        return true
    }
}

/// Where confined values may be touched: one thread at a time, named by what runs there.
package protocol Confinement: AnyObject, Sendable {
    /// Traps, in debug builds, unless the caller runs where the confined values belong, or
    /// nothing runs there at the moment.
    func preconditionConfined(_ function: StaticString, file: StaticString, line: UInt)
}

extension SerialEventLoop {
    /// An event loop confines values to its thread (`preconditionInLoop`).
    package func preconditionConfined(_ function: StaticString, file: StaticString, line: UInt) {
        preconditionInLoop(function, file: file, line: line)
    }
}

/// The confinement to a thread of one's own while it runs (`adopt()` on it as it starts,
/// `release()` as it ends); any thread while none runs.
package final class ThreadConfinement: Confinement {
    /// What the thread is, for the trap's message.
    private let name: String
    /// The thread (`pthread_self()`) while it runs; 0 before and after.
    private let owner = Atomic<UInt>(0)

    /// The confinement to the thread `name` says.
    package init(name: String) {
        self.name = name
    }

    /// The calling thread is the one from now on, until `release()`.
    package func adopt() { owner.store(UInt(pthread_self()), ordering: .releasing) }

    /// The thread ends: any thread may touch the values from now on (one at a time).
    package func release() { owner.store(0, ordering: .releasing) }

    /// Whether the caller may touch the values now: on the thread, or while none runs.
    package var isCurrent: Bool {
        let thread = owner.load(ordering: .acquiring)
        return thread == 0 || thread == UInt(pthread_self())
    }

    package func preconditionConfined(_ function: StaticString, file: StaticString, line: UInt) {
        assert(isCurrent, "\(function) called off \(name)", file: file, line: line)
    }
}
