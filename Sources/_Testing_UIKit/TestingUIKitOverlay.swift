// Swift Testing's cross-import overlay for UIKit. The toolchain's Testing module says that a
// file importing both Testing and UIKit also imports `_Testing_UIKit` (on Apple's platforms
// it attaches images to tests); Linux's toolchain does not ship that module, so a test file
// with `import Testing` and `import UIKit`, as iOS app tests write it, would fail with "no such
// module '_Testing_UIKit'". This one is empty: Linux has no UIImage to attach. The UIKit
// target depends on it so that it is built wherever UIKit is (docs/porting.md, "Imports").
