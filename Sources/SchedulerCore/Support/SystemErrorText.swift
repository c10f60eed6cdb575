#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `strerror` text with the symbolic name for the common cases: "Permission denied (EACCES)".
/// The one way every target words a failed system call.
public func systemErrorText(_ code: Int32) -> String {
    let text = String(cString: strerror(code))
    let names: [Int32: String] = [
        ENOENT: "ENOENT", EACCES: "EACCES", ENOEXEC: "ENOEXEC", EPERM: "EPERM", ENOTDIR: "ENOTDIR",
        ELOOP: "ELOOP", E2BIG: "E2BIG", ENOMEM: "ENOMEM", EAGAIN: "EAGAIN", ETXTBSY: "ETXTBSY",
        EISDIR: "EISDIR", ENAMETOOLONG: "ENAMETOOLONG", ESRCH: "ESRCH", EBUSY: "EBUSY", EINVAL: "EINVAL",
        ENOSYS: "ENOSYS", EROFS: "EROFS", EMFILE: "EMFILE", ENFILE: "ENFILE", EOPNOTSUPP: "EOPNOTSUPP",
        EPIPE: "EPIPE", ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET", EADDRINUSE: "EADDRINUSE", EEXIST: "EEXIST", EIO: "EIO",
        ENOSPC: "ENOSPC", EDQUOT: "EDQUOT",
    ]
    if let name = names[code] { return "\(text) (\(name))" }
    return "\(text) (errno \(code))"
}
