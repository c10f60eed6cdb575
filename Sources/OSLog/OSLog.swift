// `import OSLog`, as iOS 14+ code writes it for `Logger`: Apple's OSLog framework brings the
// unified logging API of `os` (and `OSLogStore`, which reads the log back: not here, since
// each message is a line on standard error; docs/porting.md, "Logging").
@_exported import os
