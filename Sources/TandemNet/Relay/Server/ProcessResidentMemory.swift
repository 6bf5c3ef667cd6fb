#if canImport(Glibc)
import Glibc
#endif

/// The process's resident memory, read from `/proc/self/statm` (its second field, in pages; see
/// proc(5)): what a relay that counts its own footprint adds to what admission checks. One
/// `open`, one `read` into a small fixed buffer and one `close`, a few microseconds, so the relay
/// reads it on its tick.
struct ProcessResidentMemory {
    /// The page size the fields are counted in.
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The resident bytes now, or nil where `/proc/self/statm` cannot be read.
    static func current() -> Int? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return residentBytes(statm: buffer[..<count], pageSize: pageSize)
    }

    /// Hands memory the allocator holds free back to the system (glibc's malloc_trim(3), found
    /// at run time: Glibc's module does not export <malloc.h>); nothing where it is missing.
    static func trimFreedMemory() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// The resident bytes a statm line names (`size resident shared text lib data dt`, in
    /// pages of `pageSize`), or nil when its second field is missing or not a number.
    static func residentBytes(statm: some Collection<UInt8>, pageSize: Int) -> Int? {
        let fields = statm.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") })
        guard fields.count >= 2, !fields[1].isEmpty else { return nil }
        var pages = 0
        for digit in fields[1] {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowed) = pages.multipliedReportingOverflow(by: 10)
            let (next, carried) = shifted.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            pages = next
        }
        let (bytes, overflowed) = pages.multipliedReportingOverflow(by: pageSize)
        return overflowed ? nil : bytes
    }
}
