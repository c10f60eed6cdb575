import Foundation

extension Scenario {
    /// The names of the built-in scenarios, in the order the documentation lists them.
    public static let builtInNames = ["commuter", "office", "night-charger", "always-plugged-server", "travel"]

    /// The built-in scenario called `name`, or `nil` when there is none.
    public static func builtIn(named name: String) -> Scenario? {
        BuiltInScenarios.parsed[name]
    }

    /// The JSON text of the built-in scenario called `name` (a starting point for one's
    /// own), or `nil` when there is none.
    public static func builtInJSON(named name: String) -> String? {
        BuiltInScenarios.sources[name]
    }
}

/// The built-in scenarios, written as scenario files are, and read by the same parser so
/// they can never drift from the schema (a test parses each one and shows any error).
enum BuiltInScenarios {
    static let sources: [String: String] = [
        "commuter": commuter,
        "office": office,
        "night-charger": nightCharger,
        "always-plugged-server": alwaysPluggedServer,
        "travel": travel,
    ]

    /// Parsed once, on first use. A source that does not parse is left out, and the test
    /// that parses every source names its error.
    static let parsed: [String: Scenario] = sources.compactMapValues { try? Scenario.parse(Data($0.utf8)) }

    /// Five weekdays then two weekend days: the week the pattern cycles through.
    static func week(weekday: String, weekend: String) -> String {
        (Array(repeating: weekday, count: 5) + Array(repeating: weekend, count: 2)).joined(separator: ",\n")
    }

    // MARK: commuter

    static let commuterWeekday = """
        {
          "name": "weekday",
          "power": [{"from": "00:00", "to": "07:00"}, {"from": "23:00", "to": "24:00"}],
          "network": [
            {"from": "00:00", "to": "07:30"},
            {"from": "07:50", "to": "08:15", "metered": true},
            {"from": "08:15", "to": "12:15"},
            {"from": "12:15", "to": "13:15", "metered": true},
            {"from": "13:15", "to": "17:30"},
            {"from": "17:50", "to": "18:15", "metered": true},
            {"from": "18:15", "to": "24:00"}
          ],
          "lowPowerMode": [{"from": "22:00", "to": "23:00"}],
          "inUse": [
            {"from": "07:30", "to": "08:15"}, {"from": "12:30", "to": "12:45"},
            {"from": "17:30", "to": "18:15"}, {"from": "21:30", "to": "21:50"}
          ],
          "launches": [
            {"at": "07:35", "minutes": 5, "probability": 0.9},
            {"at": "12:30", "minutes": 10, "probability": 0.8},
            {"at": "17:45", "minutes": 5, "probability": 0.9},
            {"at": "21:30", "minutes": 15, "probability": 0.7}
          ]
        }
        """

    static let commuterWeekend = """
        {
          "name": "weekend",
          "power": [{"from": "00:00", "to": "09:00"}, {"from": "23:30", "to": "24:00"}],
          "network": [
            {"from": "00:00", "to": "11:00"},
            {"from": "11:00", "to": "16:00", "metered": true},
            {"from": "16:00", "to": "24:00"}
          ],
          "inUse": [{"from": "10:00", "to": "10:30"}, {"from": "20:00", "to": "21:00"}],
          "launches": [
            {"at": "10:05", "minutes": 10, "probability": 0.8},
            {"at": "20:30", "minutes": 15, "probability": 0.6}
          ]
        }
        """

    static let commuter = """
        {
          "version": 1,
          "name": "commuter",
          "description": "A phone charged overnight, offline or on cellular on the commute, used on the way and in the evening.",
          "seed": 1,
          "jitterMinutes": 10,
          "battery": {"level": 0.9, "drainPerHour": 0.03, "inUseDrainPerHour": 0.12, "chargePerHour": 0.35},
          "days": [
        \(week(weekday: commuterWeekday, weekend: commuterWeekend))
          ]
        }
        """

    // MARK: office

    static let officeWeekday = """
        {
          "name": "weekday",
          "power": [{"from": "09:00", "to": "17:30"}],
          "network": [{"from": "00:00", "to": "08:30"}, {"from": "09:00", "to": "17:30"}, {"from": "18:00", "to": "24:00"}],
          "thermal": [{"from": "14:00", "to": "15:00", "state": "fair"}],
          "inUse": [{"from": "09:00", "to": "12:00"}, {"from": "13:00", "to": "17:15"}],
          "launches": [
            {"at": "09:10", "minutes": 10},
            {"at": "13:00", "minutes": 5, "probability": 0.9},
            {"at": "16:30", "minutes": 5, "probability": 0.8}
          ]
        }
        """

    static let officeWeekend = """
        {
          "name": "weekend",
          "network": [{"from": "00:00", "to": "24:00"}],
          "launches": [{"at": "11:00", "minutes": 10, "probability": 0.5}]
        }
        """

    static let office = """
        {
          "version": 1,
          "name": "office",
          "description": "A laptop plugged in at the office on weekdays, asleep on battery at home and at weekends.",
          "seed": 1,
          "jitterMinutes": 15,
          "battery": {"level": 1.0, "drainPerHour": 0.01, "inUseDrainPerHour": 0.12, "chargePerHour": 0.5},
          "days": [
        \(week(weekday: officeWeekday, weekend: officeWeekend))
          ]
        }
        """

    // MARK: night-charger

    static let nightCharger = """
        {
          "version": 1,
          "name": "night-charger",
          "description": "A phone on the charger only at night (22:30 to 06:30), always online, used in the evening.",
          "seed": 1,
          "jitterMinutes": 20,
          "battery": {"level": 0.6, "drainPerHour": 0.03, "inUseDrainPerHour": 0.12, "chargePerHour": 0.3},
          "days": [
            {
              "name": "day",
              "power": [{"from": "00:00", "to": "06:30"}, {"from": "22:30", "to": "24:00"}],
              "network": [{"from": "00:00", "to": "24:00"}],
              "inUse": [{"from": "18:00", "to": "22:00"}],
              "launches": [
                {"at": "07:00", "minutes": 5},
                {"at": "19:00", "minutes": 15, "probability": 0.9},
                {"at": "22:00", "minutes": 10, "probability": 0.8}
              ]
            }
          ]
        }
        """

    // MARK: always-plugged-server

    static let alwaysPluggedServer = """
        {
          "version": 1,
          "name": "always-plugged-server",
          "description": "A server: no battery, always online, never used, never opened.",
          "seed": 1,
          "jitterMinutes": 0,
          "days": [
            {"name": "day", "network": [{"from": "00:00", "to": "24:00"}]}
          ]
        }
        """

    // MARK: travel

    static let travel = """
        {
          "version": 1,
          "name": "travel",
          "description": "Three days on the road: a 10-hour flight offline, a day on roaming cellular in the heat, a day off the grid.",
          "seed": 1,
          "jitterMinutes": 30,
          "battery": {"level": 0.8, "drainPerHour": 0.05, "inUseDrainPerHour": 0.18, "chargePerHour": 0.4},
          "days": [
            {
              "name": "flight",
              "power": [{"from": "00:00", "to": "05:00"}, {"from": "21:00", "to": "24:00"}],
              "network": [
                {"from": "00:00", "to": "05:30"},
                {"from": "05:30", "to": "07:00", "metered": true},
                {"from": "17:00", "to": "18:00", "metered": true},
                {"from": "18:00", "to": "24:00"}
              ],
              "lowPowerMode": [{"from": "09:00", "to": "17:00"}],
              "inUse": [{"from": "05:30", "to": "06:30"}, {"from": "12:00", "to": "13:00"}, {"from": "18:00", "to": "19:00"}],
              "launches": [
                {"at": "05:40", "minutes": 5, "probability": 0.7},
                {"at": "17:05", "minutes": 10, "probability": 0.9},
                {"at": "21:30", "minutes": 10, "probability": 0.5}
              ]
            },
            {
              "name": "roaming",
              "power": [{"from": "00:00", "to": "07:00"}, {"from": "23:00", "to": "24:00"}],
              "network": [
                {"from": "00:00", "to": "08:00"},
                {"from": "08:00", "to": "20:00", "metered": true},
                {"from": "20:00", "to": "24:00"}
              ],
              "thermal": [{"from": "13:00", "to": "16:30", "state": "fair"}],
              "inUse": [{"from": "09:00", "to": "10:00"}, {"from": "14:00", "to": "15:00"}, {"from": "20:00", "to": "21:00"}],
              "launches": [
                {"at": "08:30", "minutes": 5, "probability": 0.6},
                {"at": "14:10", "minutes": 10, "probability": 0.5},
                {"at": "20:15", "minutes": 15, "probability": 0.8}
              ]
            },
            {
              "name": "off the grid",
              "power": [{"from": "00:00", "to": "06:00"}, {"from": "22:00", "to": "24:00"}],
              "network": [
                {"from": "00:00", "to": "07:00"},
                {"from": "15:00", "to": "19:00", "metered": true},
                {"from": "19:00", "to": "24:00"}
              ],
              "lowPowerMode": [{"from": "10:00", "to": "15:00"}],
              "inUse": [{"from": "11:00", "to": "11:30"}, {"from": "19:30", "to": "21:00"}],
              "launches": [
                {"at": "15:20", "minutes": 5, "probability": 0.7},
                {"at": "19:45", "minutes": 10, "probability": 0.6}
              ]
            }
          ]
        }
        """
}
