// An app delegate's orientation lock beside its background work (the tenth outside probe: a
// glucose monitor's AppDelegate), and a UI-test switch that turns animations off. Swift 6
// mode, warnings as errors.
import Foundation
import Testing
import UIKit

/// The lock as the probe's app keeps it.
@MainActor
final class OrientationLocker {
    var orientationLock: UIInterfaceOrientationMask = .allButUpsideDown
    var errors: [String] = []

    func lock(_ lock: UIInterfaceOrientationMask, in windowScene: UIWindowScene?) {
        orientationLock = lock
        guard let windowScene else {
            UINavigationController.attemptRotationToDeviceOrientation()
            return
        }
        windowScene.windows.first(where: \.isKeyWindow)?.rootViewController?.setNeedsUpdateOfSupportedInterfaceOrientations()
        let preferences = UIWindowScene.GeometryPreferences.iOS(interfaceOrientations: lock)
        windowScene.requestGeometryUpdate(preferences) { [weak self] error in
            self?.errors.append(error.localizedDescription)
        }
    }

    func configureAppForTesting() {
        UIView.setAnimationsEnabled(false)
    }
}

/// A controller that locks itself to portrait, as apps override it.
final class PortraitOnlyController: UIViewController {
    override var supportedInterfaceOrientations: UIInterfaceOrientationMask { .portrait }
}

/// A window subclass as Xcode writes one (a shake-to-report window): Apple's designated
/// initializers overridden.
final class ShakeReportingWindow: UIWindow {
    var reports = 0
    override init(frame: CGRect) { super.init(frame: frame) }
    override init(windowScene: UIWindowScene) { super.init(windowScene: windowScene) }
    required init?(coder: NSCoder) { fatalError("init(coder:) has not been implemented") }
}

@Suite struct OrientationLockTests {
    @Test @MainActor func aWindowSubclassOverridesApplesInitializersAndInheritsInit() {
        let window = ShakeReportingWindow(frame: CGRect(x: 0, y: 0, width: 10, height: 20))
        #expect(window.frame.size.height == 20 && window.reports == 0)
        // Overriding all three, it inherits init(), so its appearance proxy can be made.
        #expect(ShakeReportingWindow.appearance() === ShakeReportingWindow.appearance())
        #expect(UIWindow().frame == .zero)
    }

    @Test @MainActor func portraitIsMetAndAnotherOrientationIsDenied() async {
        let scene = UIWindowScene(session: UISceneSession(role: .windowApplication, configuration: UISceneConfiguration(name: nil, sessionRole: .windowApplication)),
                                  connectionOptions: UIScene.ConnectionOptions())
        let locker = OrientationLocker()
        locker.lock(.portrait, in: scene)
        locker.lock(.landscape, in: scene)
        locker.lock(.all, in: nil)
        // The denial comes on the main queue after this turn, as iOS calls it; a request that
        // follows it on the same queue is answered after it.
        let denial = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            scene.requestGeometryUpdate(UIWindowScene.GeometryPreferences.iOS(interfaceOrientations: .landscapeLeft)) { error in
                done.resume(returning: error.localizedDescription)
            }
        }
        #expect(denial.contains("portrait"))
        #expect(locker.errors.count == 1 && locker.errors.first?.contains("portrait") == true, "\(locker.errors)")
        #expect((scene.requestedGeometryPreferences as? UIWindowScene.GeometryPreferences.iOS)?.interfaceOrientations == .landscapeLeft)
        #expect(scene.interfaceOrientation == .portrait && locker.orientationLock == .all)
        let error = UISceneError(.geometryRequestDenied) as NSError
        #expect(error.domain == "UISceneErrorDomain" && error.code == 101)
        #expect(PortraitOnlyController().supportedInterfaceOrientations == .portrait && UIViewController().supportedInterfaceOrientations == .allButUpsideDown)
    }
}
