// UIKit.UIViewController declares nothing: `import UIKit.UIViewController` loads the Swift module UIKit (Sources/UIKit), which has the API.
