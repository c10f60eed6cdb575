import Foundation

/// An app installed with `bgtaskd` (`bgtask install <manifest>`): what the daemon needs to
/// launch it when one of its tasks should run, to check that a process connecting as the app
/// is really its executable, and to judge its requests (docs/manifest.md).
///
/// Plain data: `BGAppInstallation.validate(manifestAt:now:)` in BackgroundTasks builds one
/// from a manifest file after checking the executable; the store keeps it in
/// `installed_apps`. Reinstalling replaces it.
public struct InstalledApp: Hashable, Sendable, Codable {
    /// The app (`CFBundleIdentifier`).
    public var app: AppID
    /// The manifest it was installed from: absolute and standardized (no `.` or `..`), as
    /// `bgtask apps` shows it and a reinstall reads it again.
    public var manifestPath: String
    /// The executable the daemon launches: the absolute path of the real file
    /// (`CFBundleExecutable` resolved against the manifest's directory, directories'
    /// symbolic links resolved), which is what the kernel reports as `/proc/<pid>/exe` of
    /// its processes.
    public var executable: String
    /// `BGTaskLaunchArguments`: passed after the executable's name, as an argv array.
    public var launchArguments: [String]
    /// `BGTaskSchedulerPermittedIdentifiers`, in manifest order.
    public var permittedIdentifiers: [String]
    /// `UIBackgroundModes`.
    public var backgroundModes: Set<String>
    /// When it was installed (or last reinstalled).
    public var installedAt: Date

    /// Creates a record of an installed app. Nothing is checked here: installation checks
    /// (`BGAppInstallation`) happen before, and stored values must round-trip unchanged.
    public init(
        app: AppID,
        manifestPath: String,
        executable: String,
        launchArguments: [String] = [],
        permittedIdentifiers: [String],
        backgroundModes: Set<String>,
        installedAt: Date
    ) {
        self.app = app
        self.manifestPath = manifestPath
        self.executable = executable
        self.launchArguments = launchArguments
        self.permittedIdentifiers = permittedIdentifiers
        self.backgroundModes = backgroundModes
        self.installedAt = installedAt
    }

    /// The app's manifest as the engine judges submissions with it: identifier, permitted
    /// identifiers, background modes and launch arguments, with the manifest's path as its
    /// source (so errors name the file the user installed). `executableName` is the resolved
    /// ``executable``.
    public var manifest: AppManifest {
        AppManifest(
            appID: app,
            permittedIdentifiers: permittedIdentifiers,
            backgroundModes: backgroundModes,
            source: manifestPath,
            executableName: executable,
            launchArguments: launchArguments
        )
    }

    private enum CodingKeys: String, CodingKey {
        case app, manifestPath, executable, launchArguments, permittedIdentifiers, backgroundModes, installedAt
    }

    /// Decodes the fields written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        app = try container.decode(AppID.self, forKey: .app)
        manifestPath = try container.decode(String.self, forKey: .manifestPath)
        executable = try container.decode(String.self, forKey: .executable)
        launchArguments = try container.decode([String].self, forKey: .launchArguments)
        permittedIdentifiers = try container.decode([String].self, forKey: .permittedIdentifiers)
        backgroundModes = Set(try container.decode([String].self, forKey: .backgroundModes))
        installedAt = try container.decode(Date.self, forKey: .installedAt)
    }

    /// Encodes every field; the background modes sorted, so the same app always gives the
    /// same JSON (a `Set` would be written in a different order by every process).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(app, forKey: .app)
        try container.encode(manifestPath, forKey: .manifestPath)
        try container.encode(executable, forKey: .executable)
        try container.encode(launchArguments, forKey: .launchArguments)
        try container.encode(permittedIdentifiers, forKey: .permittedIdentifiers)
        try container.encode(backgroundModes.sorted(), forKey: .backgroundModes)
        try container.encode(installedAt, forKey: .installedAt)
    }
}

/// A process `bgtaskd` launched for an app, as recorded in the store's `app_processes`
/// (one per app), so that a daemon restarted after a crash can find and end the processes
/// the previous one left behind (issue 9, "Crash safety").
///
/// A process id alone is not an identity (the kernel reuses them): ``startTime`` is the
/// process's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), which
/// together with the pid names one process for the life of the machine.
public struct AppProcessRecord: Hashable, Sendable, Codable {
    /// The app the process runs.
    public var app: AppID
    /// Its process id.
    public var pid: Int32
    /// Its process group (the daemon launches each app in its own group and signals the
    /// group).
    public var processGroup: Int32
    /// Field 22 of `/proc/<pid>/stat` when it was launched (`starttime`, clock ticks since
    /// boot): what tells the process from a later one given the same pid.
    public var startTime: UInt64
    /// Its cgroup (a path under the delegated cgroup v2 subtree), or `nil` when it has none.
    public var cgroupPath: String?
    /// When the daemon launched it.
    public var startedAt: Date

    /// Creates a record.
    public init(app: AppID, pid: Int32, processGroup: Int32, startTime: UInt64, cgroupPath: String? = nil, startedAt: Date) {
        self.app = app
        self.pid = pid
        self.processGroup = processGroup
        self.startTime = startTime
        self.cgroupPath = cgroupPath
        self.startedAt = startedAt
    }
}
