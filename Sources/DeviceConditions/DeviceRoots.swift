import Foundation

/// Where the readers find the Linux pseudo-filesystems and state files. Every reader takes
/// its root from here, so a test (or `bgtask conditions` on a captured tree) can point them
/// at a fake tree instead of the machine's own.
///
/// | root | default | environment | read for |
/// |---|---|---|---|
/// | ``sys`` | `/sys` | `BGTASK_SYS_ROOT` | power supplies, thermal zones, interfaces (and their kinds), ACPI platform profile, CPUs online |
/// | ``proc`` | `/proc` | `BGTASK_PROC_ROOT` | routes, IPv6 addresses, PSI, load average, cpuinfo |
/// | ``run`` | `/run` | `BGTASK_RUN_ROOT` | logind sessions, NetworkManager device state |
/// | ``dev`` | `/dev` | `BGTASK_DEV_ROOT` | terminal activity (`/dev/pts/*`, `/dev/tty[0-9]*`) |
/// | ``varLib`` | `/var/lib` | `BGTASK_VAR_LIB_ROOT` | power-profiles-daemon's `state.ini` |
/// | ``etc`` | `/etc` | `BGTASK_ETC_ROOT` | NetworkManager connection profiles (their `metered=`), `resolv.conf` (a name server, for `import Network`) |
public struct DeviceRoots: Hashable, Sendable {
    /// Where `/sys` is.
    public var sys: URL
    /// Where `/proc` is.
    public var proc: URL
    /// Where `/run` is.
    public var run: URL
    /// Where `/dev` is.
    public var dev: URL
    /// Where `/var/lib` is.
    public var varLib: URL
    /// Where `/etc` is.
    public var etc: URL

    /// The machine's own trees.
    public static let system = DeviceRoots()

    /// Roots given one by one; each defaults to the machine's own directory.
    public init(
        sys: URL = URL(fileURLWithPath: "/sys"),
        proc: URL = URL(fileURLWithPath: "/proc"),
        run: URL = URL(fileURLWithPath: "/run"),
        dev: URL = URL(fileURLWithPath: "/dev"),
        varLib: URL = URL(fileURLWithPath: "/var/lib"),
        etc: URL = URL(fileURLWithPath: "/etc")
    ) {
        self.sys = sys
        self.proc = proc
        self.run = run
        self.dev = dev
        self.varLib = varLib
        self.etc = etc
    }

    /// Every root below one directory laid out like `/` (`<base>/sys`, `<base>/proc`,
    /// `<base>/run`, `<base>/dev`, `<base>/var/lib`, `<base>/etc`): how tests build a fake machine.
    public init(fakeRoot base: URL) {
        self.init(
            sys: base.appendingPathComponent("sys"),
            proc: base.appendingPathComponent("proc"),
            run: base.appendingPathComponent("run"),
            dev: base.appendingPathComponent("dev"),
            varLib: base.appendingPathComponent("var/lib"),
            etc: base.appendingPathComponent("etc")
        )
    }

    /// The roots named by `BGTASK_SYS_ROOT`, `BGTASK_PROC_ROOT`, `BGTASK_RUN_ROOT`,
    /// `BGTASK_DEV_ROOT`, `BGTASK_VAR_LIB_ROOT` and `BGTASK_ETC_ROOT`; an unset or empty
    /// variable keeps the machine's own directory.
    public init(environment: [String: String]) {
        func root(_ name: String, _ fallback: String) -> URL {
            guard let value = environment[name], !value.isEmpty else { return URL(fileURLWithPath: fallback) }
            return URL(fileURLWithPath: value)
        }
        self.init(
            sys: root("BGTASK_SYS_ROOT", "/sys"),
            proc: root("BGTASK_PROC_ROOT", "/proc"),
            run: root("BGTASK_RUN_ROOT", "/run"),
            dev: root("BGTASK_DEV_ROOT", "/dev"),
            varLib: root("BGTASK_VAR_LIB_ROOT", "/var/lib"),
            etc: root("BGTASK_ETC_ROOT", "/etc")
        )
    }
}
