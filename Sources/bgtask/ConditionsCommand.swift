import DeviceConditions
import Foundation

/// `bgtask conditions [--json] [--socket PATH]`: prints the device conditions as the
/// scheduler reads them, each with the file or service it came from (or `unknown: <why>`),
/// as a table or as JSON (the keys documented on ``DeviceReading``).
enum ConditionsCommand {
    /// Parses the arguments after `conditions`: `--json` selects JSON, `--socket PATH`
    /// names the bgtaskd to ask; nothing else is accepted.
    static func parse(_ arguments: [String]) -> Result<(json: Bool, socket: String?), UsageError> {
        var json = false
        var socket: String?
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--json":
                // Refused twice, as the daemon commands' --json is.
                guard !json else { return .failure(UsageError(message: "--json given more than once")) }
                json = true
            case "--socket":
                if let error = DaemonCommand.readSocket(arguments, at: &index, into: &socket) { return .failure(error) }
            default: return .failure(UsageError(message: "unknown option for conditions: '\(arguments[index])'"))
            }
            index += 1
        }
        return .success((json, socket))
    }

    /// Reads the device now and renders the reading: the table, or the JSON.
    static func run(json: Bool, reader: LinuxConditionsReader) -> String {
        let reading = reader.reading(now: Date())
        guard json else { return reading.table() }
        do {
            return try reading.jsonString()
        } catch {
            // Encoding a struct of strings, numbers and booleans cannot fail in practice;
            // say so plainly rather than crash if it ever does.
            return "{\"error\": \"cannot encode the reading: \(error)\"}\n"
        }
    }
}
