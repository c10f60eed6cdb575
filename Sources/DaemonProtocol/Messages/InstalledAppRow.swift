/// One row of `bgtask apps`: what bgtaskd reports of an installed app, and what `bgtask`
/// reads from the store when no daemon runs. One type, so `--json` has the same keys
/// whether the daemon answers or not (scripts broke on `manifest` against `manifestPath`).
public struct InstalledAppRow: Codable, Hashable, Sendable {
    /// The app's identifier.
    public var app: String
    /// The executable the daemon launches.
    public var executable: String
    /// The manifest it was installed from.
    public var manifest: String
    /// The supervision phase (`notRunning`, `starting`, `ready`, `suspended`, `ending`).
    public var state: String
    /// The app's process, when one runs.
    public var pid: Int32?
    /// Its pending requests.
    public var pending: Int
    /// Its runs in progress.
    public var running: Int
    /// Its Background App Refresh switch.
    public var backgroundRefresh: Bool

    /// A row from its parts.
    public init(app: String, executable: String, manifest: String, state: String, pid: Int32?, pending: Int, running: Int, backgroundRefresh: Bool) {
        self.app = app
        self.executable = executable
        self.manifest = manifest
        self.state = state
        self.pid = pid
        self.pending = pending
        self.running = running
        self.backgroundRefresh = backgroundRefresh
    }

    /// The rows as `bgtask apps` prints them.
    public static func text(_ rows: [InstalledAppRow]) -> String {
        guard !rows.isEmpty else { return "no app is installed (bgtask install <manifest>)\n" }
        return rows.map { row in
            "\(row.app)  \(row.state)\(row.pid.map { " (pid \($0))" } ?? "")  pending \(row.pending), running \(row.running), "
                + "background refresh \(row.backgroundRefresh ? "on" : "off")\n    \(row.executable)\n"
        }.joined()
    }
}
