import Testing
import TandemNATS
import TandemNet

@Suite struct NATSURLTests {
    @Test func parsesUserPasswordAndSeveralServers() throws {
        let url = try NATSURL(parsing: "nats://alice:s%40cret@127.0.0.1:4222,127.0.0.1:4223,nats://[::1]:4224")
        #expect(url.servers == [NATSServerAddress(host: "127.0.0.1", port: 4222), NATSServerAddress(host: "127.0.0.1", port: 4223),
                                NATSServerAddress(host: "::1", port: 4224)])
        #expect(url.credentials == .userPassword(user: "alice", password: "s@cret"))
        #expect(url.description == "nats://alice:***@127.0.0.1:4222,127.0.0.1:4223,[::1]:4224")
    }

    @Test func parsesATokenAndTheDefaultPort() throws {
        let url = try NATSURL(parsing: "nats://t0ken@127.0.0.1")
        #expect(url.servers == [NATSServerAddress(host: "127.0.0.1", port: 4222)])
        #expect(url.credentials == .token("t0ken"))
        #expect(!url.description.contains("t0ken"))
    }

    @Test(arguments: [
        ("http://127.0.0.1:4222", "does not start with nats://"),
        ("nats://127.0.0.1:notaport", "is not a port"),
        ("nats://127.0.0.1:0", "is not a port"),
        ("nats://127.0.0.1:4222,,127.0.0.1:4223", "server 2 is empty"),
        ("nats://@127.0.0.1:4222", "empty credentials"),
        ("nats://[::1:4222", "lacks its ']'"),
        ("nats://a:b@127.0.0.1:1,c:d@127.0.0.1:2", "different credentials"),
        ("nats://127.0.0.1:4222/path", "has a path"),
        ("nats://u:p%zz@127.0.0.1:4222", "bad percent escape"),
    ])
    func refusesMalformedURLsClearly(text: String, expected: String) {
        #expect {
            _ = try NATSURL(parsing: text)
        } throws: { error in
            guard let error = error as? NATSError else { return false }
            return error.kind == .invalidURL && error.reason.contains(expected)
        }
    }
}
