/// How the command line's messages write a count (a namespace, since apps that import
/// BackgroundTasks see SchedulerCore's public names).
public enum CountText {
    /// A count and its noun, singular for one: "1 device", "2 devices", "0 runs". The
    /// nouns of the messages all take a plain "s".
    public static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
