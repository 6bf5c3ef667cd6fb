/// A command line split into positional words, options with a value and flags.
///
/// Options are `--name VALUE` or `--name=VALUE`; flags are `--name`. A short option stands for
/// a long one only where its meaning is obvious (`-n NAME` for `--name NAME`). Anything the
/// command did not declare is an error, so a typo never goes unnoticed.
struct Arguments {
    /// Words that are not options, in order.
    var positionals: [String] = []
    /// Option values by name (without the dashes); a repeated option keeps every value.
    var values: [String: [String]] = [:]
    /// Flags that were given.
    var flags: Set<String> = []

    /// The short options, and the long ones they stand for.
    static let shortOptions: [Character: String] = ["n": "name"]

    /// Parses `words` against the declared option and flag names.
    init(_ words: [String], options: Set<String> = [], flags knownFlags: Set<String> = []) throws(CLIError) {
        var index = 0
        while index < words.count {
            var word = words[index]
            index += 1
            // `-n Ana`: a dash and one letter is a short option, never a file's name.
            if word.count == 2, word.hasPrefix("-"), let letter = word.last, letter.isLetter {
                guard let long = Self.shortOptions[letter], options.contains(long) || knownFlags.contains(long) else {
                    throw .usage("unknown option \(word)")
                }
                word = "--" + long
            }
            guard word.hasPrefix("--"), word.count > 2 else {
                positionals.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name), inlineValue == nil {
                flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    values[name, default: []].append(inlineValue)
                } else {
                    guard index < words.count else { throw .usage("--\(name) needs a value") }
                    values[name, default: []].append(words[index])
                    index += 1
                }
            } else {
                throw .usage("unknown option --\(name)")
            }
        }
    }

    /// The last value given for an option, if any.
    func value(_ name: String) -> String? { values[name]?.last }

    /// The option's value as a number, or `defaultValue` when it was not given.
    func double(_ name: String, default defaultValue: Double? = nil) throws(CLIError) -> Double? {
        guard let text = value(name) else { return defaultValue }
        guard let number = Double(text), number.isFinite else {
            throw .usage("--\(name) wants a number, not '\(text)'")
        }
        return number
    }

    /// The option's value as an integer, or `defaultValue` when it was not given.
    func int(_ name: String, default defaultValue: Int? = nil) throws(CLIError) -> Int? {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text) else { throw .usage("--\(name) wants an integer, not '\(text)'") }
        return number
    }

    /// The positional word at `index`, or a usage error naming what is missing.
    func positional(_ index: Int, _ what: String) throws(CLIError) -> String {
        guard index < positionals.count else { throw .usage("missing \(what)") }
        return positionals[index]
    }

    /// Fails when more positional words were given than the command takes.
    func expectPositionals(atMost count: Int) throws(CLIError) {
        if positionals.count > count {
            throw .usage("unexpected argument '\(positionals[count])'")
        }
    }
}
