// UIKit.UIDevice declares nothing: `import UIKit.UIDevice` loads the Swift module UIKit (Sources/UIKit), which has the API.
