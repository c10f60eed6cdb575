#if canImport(Glibc)
import Glibc
#endif
import DeviceConditions
import Foundation

/// A fake machine in a fresh temporary directory: `sys/`, `proc/`, `run/`, `dev/`,
/// `var/lib/`, `etc/` and a `state/` directory, filled file by file by each test. Nothing is
/// shared between tests, so they run in parallel.
final class FakeMachine {
    let base: URL

    init() throws {
        base = FileManager.default.temporaryDirectory
            .appendingPathComponent("bgtask-devcond-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    var roots: DeviceRoots { DeviceRoots(fakeRoot: base) }
    var stateDirectory: URL { base.appendingPathComponent("state") }
    var reader: LinuxConditionsReader {
        LinuxConditionsReader(roots: roots, stateDirectory: stateDirectory, environment: [:])
    }

    /// The absolute path of `relative` inside the fake machine (what sources name).
    func path(_ relative: String) -> String { base.appendingPathComponent(relative).path }

    /// Writes `contents` (plus the newline sysfs ends values with) to `relative`.
    func write(_ relative: String, _ contents: String, newline: Bool = true) throws {
        let url = base.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((contents + (newline ? "\n" : "")).utf8).write(to: url)
    }

    /// Creates an empty directory.
    func directory(_ relative: String) throws {
        try FileManager.default.createDirectory(at: base.appendingPathComponent(relative), withIntermediateDirectories: true)
    }

    /// Sets a file's access and modification times (terminal activity).
    func touch(_ relative: String, at date: Date) throws {
        if !FileManager.default.fileExists(atPath: path(relative)) { try write(relative, "", newline: false) }
        var times = [timespec](repeating: timespec(), count: 2)
        let seconds = date.timeIntervalSince1970
        for index in 0..<2 {
            times[index].tv_sec = Int(seconds.rounded(.down))
            times[index].tv_nsec = Int((seconds - seconds.rounded(.down)) * 1e9)
        }
        guard utimensat(AT_FDCWD, path(relative), times, 0) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path(relative)])
        }
    }

    // MARK: Building blocks

    /// A power supply directory with the given attribute files.
    func supply(_ name: String, _ attributes: [String: String]) throws {
        for (file, value) in attributes { try write("sys/class/power_supply/\(name)/\(file)", value) }
    }

    /// A laptop battery.
    func battery(_ name: String = "BAT0", status: String, capacity: String?, extra: [String: String] = [:]) throws {
        var attributes = ["type": "Battery", "status": status, "present": "1", "scope": "System"]
        if let capacity { attributes["capacity"] = capacity }
        try supply(name, attributes.merging(extra) { $1 })
    }

    /// An AC adapter.
    func mains(_ name: String = "AC", online: Bool) throws {
        try supply(name, ["type": "Mains", "online": online ? "1" : "0"])
    }

    /// A thermal zone at `celsius` with `trips` (type, celsius).
    func thermalZone(_ index: Int, millidegrees: String, type: String = "x86_pkg_temp", trips: [(String, Int)] = []) throws {
        let zone = "sys/class/thermal/thermal_zone\(index)"
        try write("\(zone)/temp", millidegrees)
        try write("\(zone)/type", type)
        for (number, trip) in trips.enumerated() {
            try write("\(zone)/trip_point_\(number)_type", trip.0)
            try write("\(zone)/trip_point_\(number)_temp", String(trip.1 * 1000))
        }
    }

    /// A network interface.
    func interface(_ name: String, operstate: String, carrier: String? = "1", ifindex: Int = 2) throws {
        try write("sys/class/net/\(name)/operstate", operstate)
        if let carrier { try write("sys/class/net/\(name)/carrier", carrier) }
        try write("sys/class/net/\(name)/ifindex", String(ifindex))
    }

    /// `/proc/net/route` with a header and `lines` (interface, destination, flags, mask).
    func ipv4Routes(_ lines: [(String, String, String, String)]) throws {
        var text = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        for (interface, destination, flags, mask) in lines {
            text += "\(interface)\t\(destination)\t0102A8C0\t\(flags)\t0\t0\t100\t\(mask)\t0\t0\t0\n"
        }
        try write("proc/net/route", text, newline: false)
    }

    /// The loopback interface and its routes, present on every Linux machine.
    func loopback() throws {
        try interface("lo", operstate: "unknown", carrier: "1", ifindex: 1)
    }

    /// A machine that is up: eth0 with an IPv4 default route.
    func wiredNetwork() throws {
        try loopback()
        try interface("eth0", operstate: "up")
        try ipv4Routes([("eth0", "00000000", "0003", "00000000"), ("eth0", "0002A8C0", "0001", "00FFFFFF")])
    }
}
