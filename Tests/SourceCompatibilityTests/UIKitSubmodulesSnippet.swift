// `import UIKit.UIDevice`, `import UIKit.UIView` and `import UIKit.UIImage`, without
// `import UIKit`, as SDKs that import UIKit's headers one by one write them: each brings all
// of UIKit here (Sources/CUIKitModuleMap), in Swift 6 mode with warnings as errors.
import UIKit.UIDevice
import UIKit.UIView
import UIKit.UIImage

/// A networking SDK's user agent, from the device (`UIKit.UIDevice`) and the screen
/// (`UIKit.UIView` brings `UIScreen`, as Apple's UIView header does through its imports).
@MainActor
func submoduleUserAgent(app: String) -> String {
    let device = UIDevice.current
    let scale = UIScreen.main.scale
    return "\(app) (\(device.model); \(device.systemName) \(device.systemVersion); Scale/\(String(format: "%0.2f", scale)))"
}

/// A view made through the submodule import.
@MainActor
func submoduleBadge() -> UIView {
    let view = UIView(frame: CGRect(x: 0, y: 0, width: 20, height: 20))
    view.backgroundColor = .systemRed
    return view
}
