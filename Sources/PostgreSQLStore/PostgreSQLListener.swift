import CLibPQ
import Foundation
import SchedulerCore
import SchedulerStore
import Synchronization

/// Word of the changes every replica makes (docs/replicas.md, "No polling"): a connection
/// of its own that `LISTEN`s on ``PostgreSQLStore/changeChannel``, on a thread of its own
/// that sleeps in `poll(2)` on the connection's socket and a wake-up pipe, so it costs
/// nothing while nothing changes.
///
/// A lost connection is reported (``SharedStoreChange/listening(down:)``) and made again
/// with backoff (100 ms doubling to 5 s, ±25 % jitter); once back, ``SharedStoreChange/everything``
/// is reported too, since the notifications sent meanwhile are gone.
///
/// Ownership: the connection is the thread's alone; the mutex holds only the stop flag.
final class PostgreSQLListener: SharedStoreListener, @unchecked Sendable {
    // @unchecked: `wakePipe`'s read end is touched only by the listening thread, its write
    // end only by `stop` (once); the connection is a local of the thread's; the shared
    // state is in mutexes (`stopped`, `thread`).
    private let address: PostgreSQLAddress
    private let applicationName: String
    private let onChange: @Sendable (SharedStoreChange) -> Void
    /// The server process of the store's own connection (its writes are not news).
    private let ownBackend: @Sendable () -> Int32?
    private let stopped = Mutex(false)
    /// The listening thread (a stop from within it, from `onChange`, cannot wait for it).
    private let thread = Mutex<ObjectIdentifier?>(nil)
    private let wakePipe: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)

    private init(address: PostgreSQLAddress, replica: String, ownBackend: @escaping @Sendable () -> Int32?, onChange: @escaping @Sendable (SharedStoreChange) -> Void, wakePipe: (Int32, Int32)) {
        self.address = address
        self.ownBackend = ownBackend
        var name = "bgtask listen \(replica)"
        while name.utf8.count > 63 { name.removeLast() }
        self.applicationName = name
        self.onChange = onChange
        self.wakePipe = wakePipe
    }

    /// Starts listening on a thread of its own.
    static func start(address: PostgreSQLAddress, replica: String, ownBackend: @escaping @Sendable () -> Int32? = { nil }, onChange: @escaping @Sendable (SharedStoreChange) -> Void) -> PostgreSQLListener {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            // Not inherited by processes the app starts; never blocks a write of stop().
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
        } else {
            fds = [-1, -1]
        }
        let listener = PostgreSQLListener(address: address, replica: replica, ownBackend: ownBackend, onChange: onChange, wakePipe: (fds[0], fds[1]))
        let thread = Thread {
            listener.thread.withLock { $0 = ObjectIdentifier(Thread.current) }
            listener.run()
        }
        thread.name = "bgtask.postgresql-listener"
        thread.start()
        return listener
    }

    deinit {
        // Here, not when the thread ends: `stop()` may still write to the pipe then, and a
        // closed descriptor's number can be another file's by that time. The thread holds
        // the listener, so it has ended when this runs.
        if wakePipe.read >= 0 { close(wakePipe.read) }
        if wakePipe.write >= 0 { close(wakePipe.write) }
    }

    /// Stops listening; returns once the thread has ended (no call of `onChange` after).
    func stop() {
        let already = stopped.withLock { flag -> Bool in
            defer { flag = true }
            return flag
        }
        guard !already else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        if thread.withLock({ $0 }) != ObjectIdentifier(Thread.current) { finished.wait() }
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    private func run() {
        defer { finished.signal() }
        var delay = 0.1
        var wasDown = false
        while !isStopped {
            guard let connection = connect() else {
                if !wasDown { wasDown = true; onChange(.listening(down: true)) }
                let jittered = delay * Double.random(in: 0.75...1.25)
                delay = min(delay * 2, 5)
                if sleepOrStop(seconds: jittered) { return }
                continue
            }
            delay = 0.1
            if wasDown {
                wasDown = false
                onChange(.listening(down: false))
            }
            // What changed before this LISTEN took effect (the store's first read, or a
            // gap) was not heard: read everything once.
            onChange(.everything)
            serve(connection)
            PQfinish(connection)
            if !isStopped { wasDown = true; onChange(.listening(down: true)) }
        }
    }

    /// A listening connection, or `nil` when the server cannot be reached now.
    private func connect() -> OpaquePointer? {
        // With TCP keepalives (PostgreSQLAddress.defaultTCPOptions): a listening connection
        // only reads, so a peer gone silently is found in about 25 s rather than the
        // system's two hours, and the safety poll starts.
        guard let handle = address.openHandle(applicationName: applicationName) else { return nil }
        guard PQstatus(handle) == CONNECTION_OK else { PQfinish(handle); return nil }
        clibpq_silence_notices(handle)
        guard let result = PQexec(handle, "LISTEN \(PostgreSQLStore.changeChannel)") else { PQfinish(handle); return nil }
        let ok = PQresultStatus(result) == PGRES_COMMAND_OK
        PQclear(result)
        guard ok else { PQfinish(handle); return nil }
        return handle
    }

    /// Reads notifications until the connection breaks or the listener is stopped.
    private func serve(_ connection: OpaquePointer) {
        let socket = PQsocket(connection)
        guard socket >= 0 else { return }
        while !isStopped {
            var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            // Without a wake pipe (pipe() failed), stop() is seen within a second.
            let ready = poll(&fds, 2, wakePipe.read >= 0 ? -1 : 1_000)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else { return }
            let own = ownBackend()
            // Everything that arrived together goes out as one change: while the replica
            // is busy, word piles up here and is caught up with in one read.
            var changes: [SharedRequestChange] = []
            var everything = false
            while let notification = PQnotifies(connection) {
                let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
                let sender = notification.pointee.be_pid
                PQfreemem(notification)
                if let own, sender == own { continue }
                if let change = PostgreSQLColumns.Payload.change(from: payload) { changes.append(change) } else { everything = true }
            }
            if everything {
                onChange(.everything)
            } else if !changes.isEmpty {
                onChange(.requests(changes))
            }
        }
    }

    /// Sleeps `seconds`, or less when stopped; returns whether it was stopped.
    private func sleepOrStop(seconds: Double) -> Bool {
        var fds = [pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, Int32(max(1, min(seconds * 1000, 10_000))))
        return isStopped
    }
}
