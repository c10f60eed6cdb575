// The scene delegate of the scene-based app (AppDelegate.swift), in its own file as Xcode
// writes it: it hears the scene's life and schedules the refresh when the scene enters the
// background.
import UIKit

class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        guard let _ = (scene as? UIWindowScene) else { return }
        print("event willConnectTo role=\(session.role.rawValue)")
    }

    func sceneDidBecomeActive(_ scene: UIScene) {
        print("event sceneDidBecomeActive")
    }

    func sceneWillResignActive(_ scene: UIScene) {
        print("event sceneWillResignActive")
    }

    func sceneWillEnterForeground(_ scene: UIScene) {
        print("event sceneWillEnterForeground")
    }

    func sceneDidEnterBackground(_ scene: UIScene) {
        print("event sceneDidEnterBackground state=\(scene.activationState == .background ? "background" : "other")")
        (UIApplication.shared.delegate as? AppDelegate)?.scheduleAppRefresh()
    }
}
