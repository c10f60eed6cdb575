#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SchedulerCore

/// A cgroup v2 subtree the daemon may manage (docs/process-supervision.md, "cgroups").
///
/// The subtree is the daemon's own cgroup (from `/proc/self/cgroup`, `0::/path`) under the
/// cgroup2 mount (from `/proc/self/mountinfo`: `/sys/fs/cgroup` on unified hosts,
/// `/sys/fs/cgroup/unified` on hybrid ones). systemd's rule, "no internal processes", says a
/// cgroup holding processes cannot give controllers to its children, so the layout is:
///
/// ```
/// <own>/daemon            the daemon itself (a leaf)      enterDaemonLeaf(pid:)
/// <own>/apps              controllers enabled for its children
/// <own>/apps/app-<name>   one per app, made fresh per process   makeAppCgroup(for:)
/// ```
public struct CgroupDelegation: Sendable, Hashable {
    /// The outcome of ``detect(procRoot:mountsFile:)``.
    public enum Detection: Sendable, Hashable {
        /// A usable subtree.
        case available(CgroupDelegation)
        /// None; the reason is for the daemon's log.
        case unavailable(reason: String)

        /// The delegation, if available.
        public var delegation: CgroupDelegation? {
            if case .available(let delegation) = self { return delegation }
            return nil
        }

        /// Why none is available, or `nil`.
        public var reason: String? {
            if case .unavailable(let reason) = self { return reason }
            return nil
        }
    }

    /// Where the cgroup2 hierarchy is mounted.
    public let mountPoint: String
    /// The absolute path of the delegated subtree (the daemon's own cgroup when detected).
    public let subtree: String

    /// The controllers the daemon asks for, when the hierarchy has them.
    public static let wantedControllers = ["cpu", "memory", "io"]

    /// A delegation of `subtree` (an existing cgroup2 directory) under `mountPoint`.
    public init(mountPoint: String, subtree: String) {
        self.mountPoint = mountPoint
        self.subtree = subtree
    }

    /// The daemon's leaf: `<subtree>/daemon`.
    public var daemonCgroup: String { subtree + "/daemon" }
    /// The parent of the app cgroups: `<subtree>/apps`.
    public var appsCgroup: String { subtree + "/apps" }

    /// The processes in ``daemonCgroup`` other than this one: another bgtaskd started from
    /// the same cgroup shares the subtree, its apps under ``appsCgroup`` alive.
    public func otherProcessesInDaemonLeaf() -> [Int32] {
        KernelFiles.cgroupProcesses(daemonCgroup).filter { $0 != getpid() }
    }

    /// Finds the cgroup2 mount and the process's own cgroup and checks that a child cgroup
    /// can be created in it (by creating `apps`, which the layout needs anyway).
    /// `procRoot` is normally `/proc`; tests pass a fake tree. `mountsFile` defaults to
    /// `<procRoot>/self/mountinfo`.
    public static func detect(procRoot: String = "/proc", mountsFile: String? = nil) -> Detection {
        let mounts = mountsFile ?? procRoot + "/self/mountinfo"
        guard let mountText = KernelFiles.text(mounts) else {
            return .unavailable(reason: "\(mounts) cannot be read")
        }
        guard let mountPoint = cgroup2MountPoint(mountinfo: mountText) else {
            return .unavailable(reason: "no cgroup2 file system is mounted (\(mounts) lists none): cgroup v1 only")
        }
        let cgroupFile = procRoot + "/self/cgroup"
        guard let cgroupText = KernelFiles.text(cgroupFile) else {
            return .unavailable(reason: "\(cgroupFile) cannot be read")
        }
        guard let own = unifiedCgroup(procCgroup: cgroupText) else {
            return .unavailable(reason: "\(cgroupFile) has no cgroup v2 line (0::/path)")
        }
        let subtree = own == "/" ? mountPoint : mountPoint + own
        var info = stat()
        guard stat(subtree, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return .unavailable(reason: "own cgroup \(subtree) is not a directory (a cgroup namespace or a different mount?)")
        }
        guard access(subtree, W_OK) == 0 else {
            return .unavailable(reason: "own cgroup \(subtree) is not writable by this user (not delegated: run under a systemd unit with Delegate=yes)")
        }
        let apps = subtree + "/apps"
        if mkdir(apps, 0o755) != 0 {
            let code = errno
            guard code == EEXIST else { return .unavailable(reason: "cannot create \(apps): \(systemErrorText(code))") }
            guard stat(apps, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                return .unavailable(reason: "\(apps) exists and is not a directory")
            }
        }
        return .available(CgroupDelegation(mountPoint: mountPoint, subtree: subtree))
    }

    /// The mount point of the first `cgroup2` line of a mountinfo text (fields: id, parent,
    /// major:minor, root, mount point, options, optional fields, `-`, type, source, options).
    /// Octal escapes (`\040` for a space) in the mount point are decoded.
    static func cgroup2MountPoint(mountinfo: String) -> String? {
        for line in mountinfo.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash >= 5, dash + 1 < fields.count else { continue }
            if fields[dash + 1] == "cgroup2" { return unescapeMountPath(String(fields[4])) }
        }
        return nil
    }

    /// The path of the `0::/path` line of `/proc/<pid>/cgroup`.
    static func unifiedCgroup(procCgroup: String) -> String? {
        for line in procCgroup.split(separator: "\n") where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            // " (deleted)" marks a removed cgroup; a path must be absolute.
            guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)"), !path.split(separator: "/").contains("..") else { return nil }
            return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        }
        return nil
    }

    private static func unescapeMountPath(_ text: String) -> String {
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "\\"), index + 3 < source.count,
               let value = UInt8(String(decoding: source[(index + 1)...(index + 3)], as: UTF8.self), radix: 8) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Layout

    /// Moves `pid` (the daemon, normally its own pid) into `<subtree>/daemon`, creating it,
    /// so that the subtree holds no processes and can give controllers to `apps`.
    public func enterDaemonLeaf(pid: Int32) throws(KernelFileError) {
        if mkdir(daemonCgroup, 0o755) != 0, errno != EEXIST { throw KernelFileError(path: daemonCgroup, code: errno) }
        try KernelFiles.write("\(pid)\n", to: daemonCgroup + "/cgroup.procs")
    }

    /// The controllers enabled for `apps`' children: each wanted one the hierarchy offers is
    /// enabled in the subtree's and in `apps`' `cgroup.subtree_control`, one at a time and
    /// best effort (a controller the parent does not give, or a subtree that still holds
    /// processes, is skipped).
    @discardableResult
    public func enableControllers() -> [String] {
        guard let offered = KernelFiles.text(subtree + "/cgroup.controllers")?.split(whereSeparator: \.isWhitespace).map(String.init) else {
            return []
        }
        var enabled: [String] = []
        for controller in Self.wantedControllers where offered.contains(controller) {
            guard (try? KernelFiles.write("+\(controller)", to: subtree + "/cgroup.subtree_control")) != nil,
                  (try? KernelFiles.write("+\(controller)", to: appsCgroup + "/cgroup.subtree_control")) != nil
            else { continue }
            enabled.append(controller)
        }
        return enabled
    }

    /// The directory name of an app's cgroup: `app-` and the identifier with every byte
    /// outside `[A-Za-z0-9._-]` replaced by `_`; when anything was replaced or the name is
    /// longer than 200 bytes, a stable hash of the identifier is appended so that distinct
    /// identifiers never share a cgroup. The prefix keeps names clear of the interface
    /// files (`cgroup.procs`, `cpu.max`) and of `.`/`..`.
    public static func cgroupName(for appID: String) -> String {
        var changed = false
        var name = ""
        for scalar in appID.unicodeScalars {
            if scalar.isASCII, scalar == "." || scalar == "_" || scalar == "-"
                || (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9") {
                name.unicodeScalars.append(scalar)
            } else {
                name.append("_")
                changed = true
            }
        }
        if name.utf8.count > 200 {
            name = String(name.prefix(200))
            changed = true
        }
        if changed || name.isEmpty {
            let hash = StableHash.fnv1a(appID.utf8)
            name += "-" + String(hash, radix: 16)
        }
        return "app-" + name
    }

    /// Creates the cgroup of `appID` under `apps`, fresh for the process about to start in
    /// it, and returns its absolute path.
    ///
    /// An empty cgroup left by the app's previous process is removed and made again, never
    /// reused: once a cgroup has been killed through `cgroup.kill` (by
    /// ``SupervisedProcess/killNow()`` or the ``OrphanReaper``), Linux (seen on 6.18) sends
    /// `SIGKILL` to every process later started into it with `CLONE_INTO_CGROUP`, so the
    /// app's every next launch would die at birth; a fresh cgroup also starts unfrozen and
    /// with zeroed counters. When that cgroup still holds processes (`EBUSY`: a process the
    /// app was handed over from, still being ended, and perhaps killed through `cgroup.kill`
    /// in a moment), the new process gets a cgroup of its own beside it
    /// (`app-<name>@2`, `@3`...: `@` is a byte ``cgroupName(for:)`` never writes, so a spare
    /// can never be another app's cgroup); such spares are removed once empty, at the app's
    /// next process. Only when 64 are busy is the first reused as it is.
    public func makeAppCgroup(for appID: String) throws(KernelFileError) -> String {
        if mkdir(appsCgroup, 0o755) != 0, errno != EEXIST { throw KernelFileError(path: appsCgroup, code: errno) }
        let base = appsCgroup + "/" + Self.cgroupName(for: appID)
        removeEmptySpares(of: base)
        for number in 1...Self.spareCgroups {
            let path = number == 1 ? base : Self.spareCgroupPath(base, number)
            if mkdir(path, 0o755) == 0 { return path }
            guard errno == EEXIST else { throw KernelFileError(path: path, code: errno) }
            if rmdir(path) == 0 {
                if mkdir(path, 0o755) != 0 { throw KernelFileError(path: path, code: errno) }
                return path
            }
            guard errno == EBUSY else { throw KernelFileError(path: path, code: errno) }
        }
        return base
    }

    /// How many cgroups one app may have at once (its process and those still being ended).
    static let spareCgroups = 64

    /// The path of spare `number` of the cgroup at `base`: `<base>@<number>`.
    static func spareCgroupPath(_ base: String, _ number: Int) -> String {
        base + "@\(number)"
    }

    /// Removes the empty spare cgroups (`<base>@2`...) of an app; busy ones stay. Spares are
    /// made in order, so the search stops after a few missing numbers in a row.
    private func removeEmptySpares(of base: String) {
        var missing = 0
        for number in 2...Self.spareCgroups {
            if rmdir(Self.spareCgroupPath(base, number)) != 0, errno == ENOENT {
                missing += 1
                if missing == 4 { break }
            } else {
                missing = 0
            }
        }
    }

    /// Whether `path` is an app cgroup directly under `appsCgroup` (one level, not `.` or
    /// `..`): the only cgroups a daemon removes or kills for an app.
    public static func isAppCgroup(_ path: String, of appsCgroup: String?) -> Bool {
        guard let appsCgroup, path.hasPrefix(appsCgroup + "/") else { return false }
        let name = path.dropFirst(appsCgroup.count + 1)
        return !name.isEmpty && !name.contains("/") && name != "." && name != ".."
    }

    /// Removes an app's cgroup; it must be empty (no processes: EBUSY otherwise). A missing
    /// one counts as removed.
    public func removeAppCgroup(_ path: String) throws(KernelFileError) {
        guard Self.isAppCgroup(path, of: appsCgroup) else { throw KernelFileError(path: path, code: EINVAL) }
        if rmdir(path) != 0, errno != ENOENT { throw KernelFileError(path: path, code: errno) }
    }
}
