// UIKit.UIView declares nothing: `import UIKit.UIView` loads the Swift module UIKit (Sources/UIKit), which has the API.
