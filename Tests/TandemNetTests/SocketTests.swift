#if canImport(Glibc)
import Glibc
#endif
import Testing
import TandemNet

@Suite struct SocketIOTests {
    @Test(arguments: [("127.0.0.1:7462", "127.0.0.1", UInt16(7462)), ("[::1]:80", "::1", 80), ("localhost:1", "127.0.0.1", 1)])
    func parsesAddresses(text: String, host: String, port: UInt16) throws {
        let address = try SocketAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == port)
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:99999", "example.org:80", "[::1]80", ":80", "1.2.3.4:-1"])
    func rejectsBadAddresses(text: String) {
        #expect(throws: AddressError.self) { try SocketAddress(parsing: text) }
    }

    @Test func emptySocketWouldBlockInsteadOfWaiting() throws {
        let socket = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try socket.receive(into: &buffer) == nil)
        let flags = fcntl(socket.descriptor, F_GETFL)
        #expect(flags & O_NONBLOCK != 0)
        #expect(fcntl(socket.descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func failuresNameTheCallAndErrno() throws {
        let first = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        let taken = try first.localAddress()
        do {
            _ = try UDPSocket(boundTo: taken)
            Issue.record("binding a taken port succeeded")
        } catch {
            #expect(error.call == "bind")
            #expect(error.errno == EADDRINUSE)
            #expect(error.description.hasPrefix("bind: "))
        }
    }

    @Test func oversizedDatagramsReportTheirRealLength() throws {
        let receiver = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        let sender = try UDPSocket(family: AF_INET)
        #expect(try sender.send([UInt8](repeating: 1, count: 100), to: try receiver.localAddress()))
        var buffer = [UInt8](repeating: 0, count: 16)
        var received: (length: Int, sender: SocketAddress?)?
        for _ in 0..<200 where received == nil {
            received = try receiver.receive(into: &buffer)
            if received == nil { usleep(5_000) }
        }
        #expect(received?.length == 100)
    }
}
