// Placeholder so the target builds until its first source lands.
enum DaemonProtocolPlaceholder {}
