// Shapes the thirteenth outside probe found in public apps and libraries that did not compile
// (written here in their shape, not copied): a wallet's delegate that refuses third-party
// keyboards, a path monitor's switch over every unsatisfied reason (iOS 18's `vpnInactive`
// among them), and a device monitor's proximity sensor.
import BackgroundTasksTesting
import Network
import SchedulerCore
import Testing
import UIKit

/// A wallet app's delegate: no custom keyboards where the user types a seed phrase.
final class KeyboardRefusingDelegate: UIResponder, UIApplicationDelegate {
    func application(_ application: UIApplication, shouldAllowExtensionPointIdentifier extensionPointIdentifier: UIApplication.ExtensionPointIdentifier) -> Bool {
        extensionPointIdentifier != .keyboard
    }
}

/// What a path monitor's library says for each reason, with every case Apple's SDK lists: the
/// file compiling is the check (a switch without `default` must name every case, and no other).
func reasonText(_ reason: NWPath.UnsatisfiedReason) -> String {
    switch reason {
    case .notAvailable: "no network"
    case .cellularDenied: "cellular denied"
    case .wifiDenied: "Wi-Fi denied"
    case .localNetworkDenied: "local network denied"
    case .vpnInactive: "VPN inactive"
    }
}

@Suite struct ThirteenthProbeSnippetTests {
    @MainActor @Test func aDelegateThatRefusesKeyboardsCompilesAndAnswers() {
        let delegate = KeyboardRefusingDelegate()
        let application = UIApplication.shared
        #expect(!delegate.application(application, shouldAllowExtensionPointIdentifier: .keyboard))
        #expect(delegate.application(application, shouldAllowExtensionPointIdentifier: UIApplication.ExtensionPointIdentifier(rawValue: "com.example.other")))
        #expect(UIApplication.ExtensionPointIdentifier.keyboard.rawValue == "com.apple.keyboard-service")
    }

    @Test func theProximitySensorStaysOffAsOnADeviceWithoutOne() throws {
        let device = try compatDevice()
        let context = device.install(app: compatApp, manifest: compatManifest) {}
        context.withCurrent {
            UIDevice.current.isProximityMonitoringEnabled = true
            #expect(!UIDevice.current.isProximityMonitoringEnabled && !UIDevice.current.proximityState)
        }
        #expect(UIDevice.proximityStateDidChangeNotification.rawValue == "UIDeviceProximityStateDidChangeNotification")
    }
}
