/// A question, as the host asks it (the answer stays with the host).
struct Question: Codable {
    var number: Int
    var text: String
}

/// A participant's answer, sent to the host alone.
struct Answer: Codable {
    var number: Int
    var text: String
}

/// The host's ruling on one answer, sent to the one who answered.
struct Verdict: Codable {
    var number: Int
    var correct: Bool
    var reason: String
}

/// One line of the scoreboard.
struct Score: Codable {
    var name: String
    var points: Int
}

/// The scoreboard, as the host keeps it, sent to everyone after each change.
struct Scoreboard: Codable {
    var scores: [Score]

    /// `ana 2, bob 1`: most points first.
    var summary: String {
        scores.isEmpty ? "(nobody yet)" : scores.map { "\($0.name) \($0.points)" }.joined(separator: ", ")
    }
}

/// Everything a late joiner needs, sent by the host alone: the current question and the scores.
struct QuizState: Codable {
    var question: Question?
    var scoreboard: Scoreboard
}
