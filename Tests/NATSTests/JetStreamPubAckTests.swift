import Foundation
@testable import TandemNATS
import TandemNet
import Testing

/// A publish's acknowledgement read without the JSON decoder, and everything else left to it.
@Suite("JetStream acknowledgements")
struct JetStreamPubAckTests {
    @Test("the plain acknowledgement reads as the decoder reads it", arguments: [
        #"{"stream":"TANDEM_SESSIONS_0","seq":42}"#,
        #"{"stream":"S","seq":18446744073709551615}"#,
        #"{"stream":"S", "domain":"hub","seq":7}"#,
    ])
    func plain(_ text: String) throws {
        let fast = try #require(JetStreamPubAck(plain: Array(text.utf8)))
        let decoded = try JSONDecoder().decode(JetStreamPubAck.self, from: Data(text.utf8))
        #expect(fast == decoded)
    }

    @Test("errors, escapes, missing or malformed fields are left to the decoder", arguments: [
        #"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"},"stream":"S","seq":0}"#,
        #"{"stream":"S\"x","seq":1}"#,
        #"{"stream":"S","seq":3,"duplicate": true}"#,
        #"{"stream":"S"}"#,
        #"{"seq":1}"#,
        #"{"stream":"S","seq":}"#,
        #"{"stream":"S","seq":99999999999999999999}"#,
        #"{"stream":"S"#,
        "",
    ])
    func notPlain(_ text: String) {
        #expect(JetStreamPubAck(plain: Array(text.utf8)) == nil)
    }

    @Test("an answer that names no error is decoded once; one that does is an error")
    func errorsStillThrow() throws {
        #expect(!JetStream.mentionsError(Array(#"{"stream":"S","seq":1}"#.utf8)))
        let reply = NATSMessage(subject: "_INBOX.x", sid: 1,
                                payload: Array(#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}"#.utf8))
        let error = #expect(throws: JetStreamError.self) { try JetStream.decode(reply, as: JetStreamPubAck.self) }
        #expect(error?.kind == .wrongLastSequence)
    }
}
