// UIKit.UIScreen declares nothing: `import UIKit.UIScreen` loads the Swift module UIKit (Sources/UIKit), which has the API.
