// Darwin's `sysctlbyname`, which analytics and crash-reporting SDKs call for the device's
// model (`"hw.machine"`: the thirteenth outside probe, an analytics SDK's device-info code,
// outside any `#if`) and apps for the processor count or memory. glibc has no such call (its
// `sysctl` is gone), so without one such a file does not compile. This answers the names such
// code reads, from what Linux says of the machine, with Darwin's conventions: a size query
// (`oldp` nil), `ENOMEM` for a buffer too small (the size needed written back), `ENOENT` for
// a name it does not know, `EPERM` for a write (nothing here can be set).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads the system value called `name` into `oldp` (Apple's Darwin: `sysctlbyname`), as the
/// names iOS and macOS code reads are answered on Linux: `hw.machine` (the machine's
/// architecture, `uname -m`, as a Mac answers: `x86_64`, `aarch64`), `hw.model` (the same),
/// `kern.ostype` (`Linux`), `kern.osrelease` and `kern.version` (`uname -r`, `uname -v`),
/// `kern.hostname`, as C strings; `hw.ncpu`, `hw.activecpu`, `hw.logicalcpu` and
/// `hw.physicalcpu` (the processors, an `Int32`), and `hw.memsize` (the memory in bytes, a
/// `UInt64`). With `oldp` nil, the size the value needs is written to `oldlenp`. Returns 0,
/// or -1 with `errno` set: `ENOENT` for any other name, `ENOMEM` when `*oldlenp` is smaller
/// than the value (the size needed written back), `EPERM` when `newp` is given (no value can
/// be set), `EINVAL` when `name` or `oldlenp` is missing.
@discardableResult
public func sysctlbyname(_ name: UnsafePointer<CChar>?, _ oldp: UnsafeMutableRawPointer?, _ oldlenp: UnsafeMutablePointer<Int>?, _ newp: UnsafeMutableRawPointer?, _ newlen: Int) -> Int32 {
    guard let name else { errno = EINVAL; return -1 }
    guard newp == nil, newlen == 0 else { errno = EPERM; return -1 }
    guard let value = SystemValue.named(String(cString: name)) else { errno = ENOENT; return -1 }
    guard let oldlenp else { errno = EINVAL; return -1 }
    let bytes = value.bytes
    guard let oldp else {
        oldlenp.pointee = bytes.count
        return 0
    }
    guard oldlenp.pointee >= bytes.count else {
        oldlenp.pointee = bytes.count
        errno = ENOMEM
        return -1
    }
    bytes.withUnsafeBytes { oldp.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    oldlenp.pointee = bytes.count
    return 0
}

/// A value `sysctlbyname` answers, as the bytes Darwin writes for it.
enum SystemValue {
    case text(String)
    case int32(Int32)
    case uint64(UInt64)

    /// The bytes: a string with its terminating zero, a number in the machine's order.
    var bytes: [UInt8] {
        switch self {
        case .text(let text): Array(text.utf8) + [0]
        case .int32(let number): withUnsafeBytes(of: number) { Array($0) }
        case .uint64(let number): withUnsafeBytes(of: number) { Array($0) }
        }
    }

    /// The value called `name`, or nil for a name not answered.
    static func named(_ name: String) -> SystemValue? {
        switch name {
        case "hw.machine", "hw.model": return .text(uname(\.machine))
        case "kern.ostype": return .text("Linux")
        case "kern.osrelease": return .text(uname(\.release))
        case "kern.version": return .text(uname(\.version))
        case "kern.hostname": return .text(uname(\.nodename))
        case "hw.ncpu", "hw.activecpu", "hw.logicalcpu", "hw.physicalcpu":
            return .int32(Int32(clamping: ProcessInfo.processInfo.activeProcessorCount))
        case "hw.memsize": return .uint64(ProcessInfo.processInfo.physicalMemory)
        default: return nil
        }
    }

    /// A field of `uname(2)` as text (empty if the call fails, which it does not on Linux).
    private static func uname<Field>(_ field: KeyPath<utsname, Field>) -> String {
        var names = utsname()
        guard Glibc.uname(&names) == 0 else { return "" }
        return withUnsafeBytes(of: names[keyPath: field]) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}
