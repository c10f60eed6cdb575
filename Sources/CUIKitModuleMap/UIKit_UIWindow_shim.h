// UIKit.UIWindow declares nothing: `import UIKit.UIWindow` loads the Swift module UIKit (Sources/UIKit), which has the API.
