import Foundation

/// Reads whether Low Power Mode is on. Linux has no single switch, so the first of these
/// that exists decides:
///
/// 1. the override file `<state directory>/low-power-mode`, containing `on` or `off` (for
///    machines without a power daemon, and for users who want the scheduler to behave as
///    if Low Power Mode were on); any other content is named in the source and skipped;
/// 2. power-profiles-daemon's saved state, `<varLib>/power-profiles-daemon/state.ini`:
///    `Profile=power-saver` is on, any other profile off. The daemon's live state is on
///    D-Bus only; the file is what it writes on every change, readable without D-Bus;
/// 3. the ACPI platform profile, `<sys>/firmware/acpi/platform_profile`: `low-power` is on,
///    any other profile off;
/// 4. none of them: off, with an `unknown:` source.
///
/// A later source is not consulted once an earlier one exists, because power-profiles-daemon
/// itself drives the platform profile: when the daemon is there, its choice is the user's.
public struct LowPowerModeReader: Sendable {
    /// Where `/sys` is.
    public var sysRoot: URL
    /// Where `/var/lib` is.
    public var varLibRoot: URL
    /// The directory holding the `low-power-mode` override, if any.
    public var stateDirectory: URL?

    /// Reads under the given roots.
    public init(sysRoot: URL, varLibRoot: URL, stateDirectory: URL?) {
        self.sysRoot = sysRoot
        self.varLibRoot = varLibRoot
        self.stateDirectory = stateDirectory
    }

    /// The name of the override file in the state directory.
    public static let overrideFileName = "low-power-mode"

    /// Reads the sources in order.
    public func read() -> SourcedValue<Bool> {
        var skipped: [String] = []
        if let stateDirectory {
            let url = stateDirectory.appendingPathComponent(Self.overrideFileName)
            let contents = SysfsFile.contents(of: url)
            switch contents.text?.lowercased() {
            case "on": return SourcedValue(true, source: "override \(url.path) is \"on\"")
            case "off": return SourcedValue(false, source: "override \(url.path) is \"off\"")
            case .some(let text): skipped.append("\(url.path) is \(SysfsFile.quoted(text)), not on or off")
            case nil: if case .unreadable(let why) = contents { skipped.append("\(url.path) cannot be read (\(why))") }
            }
        }

        let state = varLibRoot.appendingPathComponent("power-profiles-daemon/state.ini")
        let stateContents = SysfsFile.contents(of: state)
        if let text = stateContents.text {
            if let profile = SysfsFile.keyValue(text, key: "Profile"), !profile.isEmpty {
                return SourcedValue(profile == "power-saver", source: "power-profiles-daemon \(state.path) Profile=\(profile)")
            }
            skipped.append("\(state.path) has no Profile=")
        } else if case .unreadable(let why) = stateContents {
            skipped.append("\(state.path) cannot be read (\(why))")
        }

        let platform = sysRoot.appendingPathComponent("firmware/acpi/platform_profile")
        let platformContents = SysfsFile.contents(of: platform)
        if let profile = platformContents.text, !profile.isEmpty {
            return SourcedValue(profile == "low-power", source: "\(platform.path) is \(SysfsFile.quoted(profile))")
        } else if let problem = SysfsFile.problem(platformContents, platform), platformContents != .missing {
            skipped.append(problem)
        }

        let note = skipped.isEmpty ? "" : " (" + skipped.joined(separator: "; ") + ")"
        return SourcedValue(false, source: SysfsFile.unknown("no override, no power-profiles-daemon state and no ACPI platform profile; assumed off" + note))
    }
}
