import Foundation
import SchedulerCore

/// Reads power and network from Linux's sysfs and procfs, under injectable roots so
/// tests can use fake trees (`BGTASK_SYS_ROOT`, `BGTASK_PROC_ROOT`).
///
/// - External power: a `Mains`/`USB` supply with `online` = 1, or no system battery at all
///   (a desktop or server); batteries with `scope` = `Device` (a wireless mouse) are
///   ignored. A battery `status` of `Charging` or `Full` also counts as on power.
/// - Network: some interface other than loopback is up (`operstate` up or unknown, carrier
///   1) and a default route exists in `/proc/net/route` or `/proc/net/ipv6_route`.
///
/// The policy issue extends this with battery level, low power mode, thermal state,
/// metered networks, idleness and netlink change events.
public struct LinuxConditionsReader: ConditionsProvider {
    /// Where `/sys` is.
    public var sysRoot: URL
    /// Where `/proc` is.
    public var procRoot: URL

    /// Reads under the given roots; defaults from `BGTASK_SYS_ROOT` / `BGTASK_PROC_ROOT`,
    /// else `/sys` and `/proc`.
    public init(sysRoot: URL? = nil, procRoot: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.sysRoot = sysRoot ?? URL(fileURLWithPath: environment["BGTASK_SYS_ROOT"] ?? "/sys")
        self.procRoot = procRoot ?? URL(fileURLWithPath: environment["BGTASK_PROC_ROOT"] ?? "/proc")
    }

    public func read() -> Conditions {
        Conditions(externalPower: readExternalPower(), networkAvailable: readNetworkAvailable())
    }

    /// Whether the device runs on external power (or has no system battery).
    public func readExternalPower() -> Bool {
        let supplies = sysRoot.appendingPathComponent("class/power_supply")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: supplies.path)) ?? []
        var sawSystemBattery = false
        var batteryCharging = false
        for name in names.sorted() {
            let supply = supplies.appendingPathComponent(name)
            let type = value(supply, "type")
            if value(supply, "scope")?.lowercased() == "device" { continue }
            switch type {
            case "Mains", "USB", "USB_C", "USB_PD":
                if value(supply, "online") == "1" { return true }
            case "Battery":
                sawSystemBattery = true
                if let status = value(supply, "status"), status == "Charging" || status == "Full" { batteryCharging = true }
            default:
                continue
            }
        }
        return !sawSystemBattery || batteryCharging
    }

    /// Whether some non-loopback interface is up and a default route exists.
    public func readNetworkAvailable() -> Bool {
        hasInterfaceUp() && hasDefaultRoute()
    }

    private func hasInterfaceUp() -> Bool {
        let net = sysRoot.appendingPathComponent("class/net")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: net.path)) ?? []
        return names.contains { name in
            guard name != "lo" else { return false }
            let interface = net.appendingPathComponent(name)
            let state = value(interface, "operstate")
            guard state == "up" || state == "unknown" else { return false }
            return value(interface, "carrier") != "0"
        }
    }

    private func hasDefaultRoute() -> Bool {
        if let table = text(procRoot.appendingPathComponent("net/route")) {
            // Iface Destination Gateway Flags ...: destination 00000000 with RTF_UP (0x1).
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count > 3, fields[0] != "lo", fields[1] == "00000000",
                      let flags = Int(fields[3], radix: 16), flags & 0x1 != 0 else { continue }
                return true
            }
        }
        if let table = text(procRoot.appendingPathComponent("net/ipv6_route")) {
            // dest(32 hex) dest_prefixlen(hex) ... flags(field 8) iface(field 9).
            for line in table.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count > 9, fields[9] != "lo", fields[0] == Substring(String(repeating: "0", count: 32)), fields[1] == "00",
                      let flags = Int(fields[8], radix: 16), flags & 0x1 != 0 else { continue }
                return true
            }
        }
        return false
    }

    private func value(_ directory: URL, _ name: String) -> String? {
        text(directory.appendingPathComponent(name))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func text(_ url: URL) -> String? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
