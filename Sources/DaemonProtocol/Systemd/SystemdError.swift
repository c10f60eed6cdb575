/// Why systemd's variables (`LISTEN_FDS`, `NOTIFY_SOCKET`, `WATCHDOG_USEC`...), the
/// descriptors they name, or a notification cannot be used: one error for the activation
/// and the notifier.
public struct SystemdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The variable, descriptor or address concerned (`LISTEN_FDS`, `fd 3`, `NOTIFY_SOCKET`).
    public var culprit: String
    /// The explanation, naming the culprit.
    public var message: String

    /// An error from its parts.
    public init(culprit: String, message: String) {
        self.culprit = culprit
        self.message = message
    }

    /// ``message``.
    public var description: String { message }
}
