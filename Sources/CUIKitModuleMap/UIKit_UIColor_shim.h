// UIKit.UIColor declares nothing: `import UIKit.UIColor` loads the Swift module UIKit (Sources/UIKit), which has the API.
