#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation

/// systemd's notification protocol without libsystemd (`sd_notify(3)`): readiness, status,
/// stopping and watchdog pings as datagrams to `NOTIFY_SOCKET` (docs/protocol.md, "Socket
/// activation and notify").
///
/// Everything is a no-op when `NOTIFY_SOCKET` is unset (the daemon started by hand). The
/// environment is passed in; the caller unsets `NOTIFY_SOCKET`, `WATCHDOG_USEC` and
/// `WATCHDOG_PID` itself so children do not inherit them.
public struct SystemdNotifier: Sendable {
    /// Why notifying failed (or a variable is unusable).
    public typealias NotifyError = SystemdError

    /// Where notifications go: `NOTIFY_SOCKET` (a path, or `@name` in the abstract
    /// namespace), or nil when it is unset.
    public let socketAddress: String?
    /// How often systemd expects `WATCHDOG=1` (`WATCHDOG_USEC`), when the watchdog is on and
    /// meant for this process (`WATCHDOG_PID` unset or ours); ping at half of it.
    public let watchdogInterval: Duration?
    /// Problems found in the variables (an unusable `WATCHDOG_USEC`...), for the log.
    public let warnings: [String]

    private let address: UnixSocket.Address?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment` for
    /// process `pid`.
    ///
    /// - Throws: ``NotifyError`` for a `NOTIFY_SOCKET` that is neither an absolute path nor
    ///   `@name`, or too long for a socket address.
    public init(environment: [String: String], pid: Int32 = getpid()) throws(NotifyError) {
        var warnings: [String] = []
        if let text = environment["NOTIFY_SOCKET"], !text.isEmpty {
            guard text.hasPrefix("/") || (text.hasPrefix("@") && text.count > 1) else {
                throw NotifyError(culprit: "NOTIFY_SOCKET", message: "NOTIFY_SOCKET=\(text) is neither an absolute path nor @name (an abstract socket)")
            }
            let address = UnixSocket.Address(text)
            do {
                try UnixSocket.withAddress(address) { _, _ in () }
            } catch {
                throw NotifyError(culprit: "NOTIFY_SOCKET", message: "NOTIFY_SOCKET=\(text) is unusable: \(error)")
            }
            self.address = address
            self.socketAddress = text
        } else {
            self.address = nil
            self.socketAddress = nil
        }

        var interval: Duration?
        if let usecText = environment["WATCHDOG_USEC"] {
            var forUs = true
            if let pidText = environment["WATCHDOG_PID"] {
                if let watchdogPID = SystemdActivation.decimal(pidText), watchdogPID > 0, watchdogPID <= Int(Int32.max) {
                    forUs = watchdogPID == Int(pid)
                } else {
                    warnings.append("WATCHDOG_PID=\(pidText) is not a process id; the watchdog is ignored")
                    forUs = false
                }
            }
            if forUs {
                // systemd's limit: at most UINT64_MAX - 1 µs; we take at most a year, which
                // also keeps the Duration and Dispatch conversions in range.
                if let usec = SystemdActivation.decimal(usecText), usec > 0, usec <= 365 * 86_400 * 1_000_000 {
                    interval = .microseconds(usec)
                } else {
                    warnings.append("WATCHDOG_USEC=\(usecText) is not a number of microseconds from 1 to one year; the watchdog is ignored")
                }
            }
        }
        self.watchdogInterval = socketAddress == nil ? nil : interval
        self.warnings = warnings
    }

    /// Whether notifications are sent (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { address != nil }

    /// Sends one datagram of `assignments` (`READY=1`...), newline-separated. A no-op
    /// when disabled.
    ///
    /// - Throws: ``NotifyError`` naming the socket when the datagram cannot be sent.
    public func notify(_ assignments: [String]) throws(NotifyError) {
        guard let address else { return }
        let message = assignments.joined(separator: "\n")
        let descriptor = socket(AF_UNIX, UnixSocket.datagram | UnixSocket.closeOnExec, 0)
        guard descriptor >= 0 else {
            throw NotifyError(culprit: address.text, message: "cannot notify \(address.text): \(SystemCallError(call: "socket", code: errno))")
        }
        defer { close(descriptor) }
        let sent: Int
        do {
            sent = try UnixSocket.withAddress(address) { pointer, length in
                Array(message.utf8).withUnsafeBytes { bytes in
                    sendto(descriptor, bytes.baseAddress, bytes.count, UnixSocket.noSignal, pointer, length)
                }
            }
        } catch {
            throw NotifyError(culprit: address.text, message: "cannot notify \(address.text): \(error)")
        }
        guard sent >= 0 else {
            throw NotifyError(culprit: address.text, message: "cannot notify \(address.text): \(SystemCallError(call: "sendto", code: errno))")
        }
    }

    /// `READY=1` (with `STATUS=` when `status` is given): start-up is complete.
    public func ready(status: String? = nil) throws(NotifyError) {
        try notify(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// `STATUS=…`: a line `systemctl status` shows.
    public func status(_ text: String) throws(NotifyError) {
        try notify(["STATUS=" + Self.oneLine(text)])
    }

    /// `STOPPING=1`: shutdown has begun.
    public func stopping() throws(NotifyError) {
        try notify(["STOPPING=1"])
    }

    /// `WATCHDOG=1`: still alive.
    public func watchdog() throws(NotifyError) {
        try notify(["WATCHDOG=1"])
    }

    /// `MAINPID=…`: the service's main process is `pid`.
    public func mainPID(_ pid: Int32) throws(NotifyError) {
        try notify(["MAINPID=\(pid)"])
    }

    /// Starts pinging `WATCHDOG=1` at half of ``watchdogInterval`` on a Dispatch timer;
    /// nil when there is no watchdog. Each ping first calls `probe`, which should take the
    /// locks the service cannot work without: a service stuck on one of them stops pinging,
    /// and systemd restarts it (a timer alone would ping on through a deadlock). A failed
    /// ping is reported to `onError` (the daemon logs it) and pinging goes on. Cancel the
    /// returned timer to stop.
    public func startWatchdog(
        queue: DispatchQueue = DispatchQueue(label: "bgtaskd.watchdog"),
        probe: @escaping @Sendable () -> Void = {},
        onError: @escaping @Sendable (NotifyError) -> Void = { _ in }
    ) -> WatchdogPinger? {
        guard let watchdogInterval, isEnabled else { return nil }
        return WatchdogPinger(notifier: self, period: watchdogInterval / 2, queue: queue, probe: probe, onError: onError)
    }

    /// `text` with line breaks turned into spaces (a newline would start a new assignment).
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}

/// Pings systemd's watchdog periodically until cancelled (``SystemdNotifier/startWatchdog(queue:probe:onError:)``).
public final class WatchdogPinger: Sendable {
    /// The time between pings (half the watchdog interval).
    public let period: Duration
    // A Dispatch timer is thread-safe to cancel; it is only stored, never mutated.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    init(
        notifier: SystemdNotifier, period: Duration, queue: DispatchQueue,
        probe: @escaping @Sendable () -> Void,
        onError: @escaping @Sendable (SystemdNotifier.NotifyError) -> Void
    ) {
        self.period = period
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler {
            // Returns only if the service's locks can be taken: no ping from a stuck service.
            probe()
            do throws(SystemdNotifier.NotifyError) { try notifier.watchdog() } catch { onError(error) }
        }
        let interval = period.dispatchInterval
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
        timer.activate()
        self.timer = timer
    }

    /// Stops pinging. Idempotent.
    public func cancel() { timer.cancel() }

    deinit { timer.cancel() }
}
