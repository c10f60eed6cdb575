import DeviceConditions
import Foundation

/// `bgtask conditions [--json]`: prints the device conditions as the scheduler reads them,
/// each with the file or service it came from (or `unknown: <why>`), as a table or as JSON
/// (the keys documented on ``DeviceReading``).
enum ConditionsCommand {
    /// The line for the tool's usage text.
    static let usage = "conditions [--json]  print the device conditions (power, battery, low power mode, thermal,\n                    network, idle, CPU pressure) and where each was read from"

    /// Parses the arguments after `conditions`: `--json` selects JSON (`true`); nothing
    /// else is accepted.
    static func parse(_ arguments: [String]) -> Result<Bool, UsageError> {
        var json = false
        for argument in arguments {
            switch argument {
            case "--json": json = true
            default: return .failure(UsageError(message: "unknown option for conditions: '\(argument)'"))
            }
        }
        return .success(json)
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
