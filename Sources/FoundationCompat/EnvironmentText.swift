import Glibc

/// Whether a variable of this process's environment read as text is what the process was
/// given. Foundation decodes the environment as UTF-8, replacing each byte that is not with
/// U+FFFD, so a path such as `XDG_STATE_HOME=/home/a/st\xff` reads as `/home/a/st�`: a
/// directory that does not exist, which the store would be created in, leaving the real one
/// behind (an outside probe found bgtask reporting no apps and bgtaskd serving an empty
/// store so). A path read from such a variable is refused instead, naming it.
package enum EnvironmentText {
    /// Why `value`, read from `variable` of the environment, cannot be used as a path: the
    /// process's own variable is not valid UTF-8 (its bytes shown, escaped), or `nil`.
    /// Only a value holding U+FFFD is looked at again, so an environment a caller built
    /// (a test's) is taken as it is.
    package static func problem(variable: String, value: String) -> String? {
        guard value.unicodeScalars.contains("\u{FFFD}"), let raw = getenv(variable) else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
        // Only this process's own variable, read lossily, is refused: not valid UTF-8, and
        // what Foundation made of it is the value given.
        guard String(validating: bytes, as: UTF8.self) == nil, String(decoding: bytes, as: UTF8.self) == value else { return nil }
        return "\(variable) is not valid UTF-8 (\"\(escaped(bytes))\"): a path read from it would name another directory; set it to a path in UTF-8"
    }

    /// `bytes` with printable ASCII as it is and every other byte as `\xNN`.
    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "\"") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }
}
