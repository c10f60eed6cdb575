#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import SchedulerCore
import Synchronization

/// Watches what the daemon cannot work without, with inotify (no wake-up while nothing
/// happens): its state directory, its store and the store's lock file, and its socket.
///
/// SQLite goes on writing a database whose file was removed (an `rm -rf` of the state
/// directory, a clean-up script): every install, switch and submission would be acknowledged
/// into a file nobody can open again, and, its lock file gone too, a second bgtaskd could
/// start on the same directory. A socket removed from under the daemon leaves it running but
/// unreachable: `bgtask` says no daemon runs, and a new one cannot start while this one owns
/// the state. Either way the daemon stops (exit status 1, so a service manager restarts it)
/// and says why (docs/daemon.md, "Removed from under it").
final class StateWatch: @unchecked Sendable {
    // @unchecked: `source` is set once; a dispatch source is safe to cancel from any thread
    // (Dispatch does not mark it Sendable).
    /// What went away.
    enum Loss: Equatable {
        case stateDirectory(String)
        case store(String)
        case socket(String)

        /// Why the daemon stops.
        var reason: String {
            switch self {
            case .stateDirectory(let path):
                return "its state directory \(path) was removed or moved while it ran: what it acknowledged from now on would be lost, and another bgtaskd could start on it"
            case .store(let path):
                let what = path.hasSuffix(".lock") ? "its store's lock file" : "its store"
                return "\(what) \(path) was removed or moved while it ran: what it acknowledged from now on would be lost, and another bgtaskd could start on it"
            case .socket(let path):
                return "its socket \(path) was removed or moved while it ran: no client could reach it any more"
            }
        }
    }

    private let source: any DispatchSourceRead

    /// Watches `stateDirectory` (and, in it, `storeNames`) and the socket at `socketPath`
    /// (`nil`: a socket systemd passed, which is systemd's to keep); calls `lost` once, on
    /// `queue`, with the first loss. `nil` when inotify cannot be used (the reason is
    /// returned in `problem`).
    static func start(stateDirectory: String, storeNames: Set<String>, socketPath: String?, queue: DispatchQueue, lost: @escaping @Sendable (Loss) -> Void) -> (watch: StateWatch?, problem: String?) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return (nil, "inotify_init1: \(String(cString: strerror(errno)))") }
        var names: [Int32: (directory: String, watched: Set<String>, isState: Bool)] = [:]
        let selfGone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
        let childGone = UInt32(IN_DELETE | IN_MOVED_FROM)
        let state = inotify_add_watch(descriptor, stateDirectory, selfGone | childGone)
        guard state >= 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return (nil, "inotify_add_watch \(stateDirectory): \(reason)")
        }
        names[state] = (stateDirectory, storeNames, true)
        if let socketPath {
            let directory = (socketPath as NSString).deletingLastPathComponent
            let name = (socketPath as NSString).lastPathComponent
            if directory == stateDirectory {
                names[state]?.watched.insert(name)
            } else {
                let socket = inotify_add_watch(descriptor, directory, selfGone | childGone)
                if socket >= 0 { names[socket] = (directory, [name], false) }
            }
        }
        let watched = names
        let once = Mutex(false)
        let report: @Sendable (Loss) -> Void = { loss in
            guard once.withLock({ first in defer { first = true }; return !first }) else { return }
            lost(loss)
        }
        // What is gone now, looked at directly: before the watches were added (a removal in
        // between sends no event), and when the kernel's event queue overflowed.
        let look: @Sendable () -> Void = {
            var info = stat()
            if stat(stateDirectory, &info) != 0 { return report(.stateDirectory(stateDirectory)) }
            for name in storeNames.sorted() {
                let path = (stateDirectory as NSString).appendingPathComponent(name)
                if lstat(path, &info) != 0 { return report(.store(path)) }
            }
            if let socketPath, lstat(socketPath, &info) != 0 { return report(.socket(socketPath)) }
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler {
            for event in readEvents(descriptor) {
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    look()
                    continue
                }
                guard let place = watched[event.watch] else { continue }
                if event.mask & selfGone != 0 || event.mask & UInt32(IN_IGNORED) != 0 {
                    if let loss = place.isState ? Loss.stateDirectory(place.directory) : socketPath.map(Loss.socket) { report(loss) }
                } else if event.mask & childGone != 0, let name = event.name, place.watched.contains(name) {
                    let path = (place.directory as NSString).appendingPathComponent(name)
                    report(path == socketPath ? .socket(path) : .store(path))
                }
            }
        }
        // The descriptor is closed once the source no longer reads it.
        source.setCancelHandler { close(descriptor) }
        source.activate()
        queue.async(execute: look)
        return (StateWatch(source: source), nil)
    }

    private init(source: any DispatchSourceRead) {
        self.source = source
    }

    /// Stops watching (the daemon's own stop removes its socket); the descriptor is closed
    /// by the source's cancel handler.
    func cancel() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }

    /// The events waiting on `descriptor` (non-blocking: none when there are none).
    private static func readEvents(_ descriptor: Int32) -> [(watch: Int32, mask: UInt32, name: String?)] {
        var events: [(watch: Int32, mask: UInt32, name: String?)] = []
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            guard count > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let length = Int(event.len)
                var name: String?
                if length > 0, offset + header + length <= count {
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + header, count: length)
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                events.append((event.wd, event.mask, name))
                offset += header + length
            }
        }
        return events
    }
}
