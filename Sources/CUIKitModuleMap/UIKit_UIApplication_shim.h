// UIKit.UIApplication declares nothing: `import UIKit.UIApplication` loads the Swift module UIKit (Sources/UIKit), which has the API.
