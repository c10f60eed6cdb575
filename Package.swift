// swift-tools-version:6.2
// swift-background-tasks: iOS's background execution system, rebuilt in Swift for Linux.
import PackageDescription

let package = Package(
    name: "swift-background-tasks",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BackgroundTasks", targets: ["BackgroundTasks"]),
        .library(name: "BackgroundTasksTesting", targets: ["BackgroundTasksTesting"]),
        // The engine's types, for code that configures an embedded scheduler or reads its
        // records (BackgroundTasks uses them in its API but does not re-export them).
        .library(name: "SchedulerCore", targets: ["SchedulerCore"]),
        // `import UIKit` for iOS code: UIApplication, its delegate and scenes (re-exports BackgroundTasks).
        .library(name: "UIKit", targets: ["UIKit"]),
        .library(name: "Combine", targets: ["Combine"]),
        .library(name: "os", targets: ["os", "OSLog"]),
        .library(name: "OSLog", targets: ["OSLog"]),
        .library(name: "SwiftUI", targets: ["SwiftUI"]),
        .library(name: "UserNotifications", targets: ["UserNotifications"]),
        .library(name: "WidgetKit", targets: ["WidgetKit"]),
        .library(name: "Network", targets: ["Network"]),
        .library(name: "SystemConfiguration", targets: ["SystemConfiguration"]),
        // What Apple's Foundation brings beside its types (Combine, URLSession, Dispatch's
        // and Core Foundation's constants), for a target whose files import Foundation alone
        // to import implicitly (docs/porting.md, "Files that import Foundation alone").
        .library(name: "FoundationCompat", targets: ["FoundationCompat"]),
        .executable(name: "bgtask", targets: ["bgtask"]),
        .executable(name: "bgtaskd", targets: ["bgtaskd"]),
    ],
    targets: [
        // SQLite from Debian's libsqlite3-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libpq from Debian's libpq-dev: the PostgreSQL store's client library.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // UIKit's enums as C enums, imported as open (non-frozen) enums exactly as on iOS.
        .target(name: "CUIKitTypes"),
        // Tiny C shims over Linux calls Swift cannot make directly (SO_PEERCRED, clone3, pidfd).
        .target(name: "CLinux"),
        // The daemon's wire: versioned, length-prefixed frames and messages over Unix stream
        // sockets, peer credentials, socket paths, systemd's socket activation and notify.
        .target(name: "DaemonProtocol", dependencies: ["SchedulerCore", "CLinux", "FoundationCompat"]),
        // Launching and supervising app processes: spawn into a process group (and a cgroup
        // where one is delegated), exit watching, suspend/resume, termination, measurement.
        .target(name: "ProcessSupervision", dependencies: ["SchedulerCore", "CLinux"]),
        // Pure scheduling logic: requests, manifests, the engine state machine. Foundation only.
        .target(name: "SchedulerCore"),
        // `import Combine` as iOS code writes it (Linux's toolchain has none): publishers,
        // subscribers, subjects, operators, schedulers, `@Published` and `ObservableObject`;
        // re-exported by BackgroundTasks, as Apple's Foundation re-exports Combine.
        .target(name: "Combine"),
        // What Apple's Foundation brings that swift-corelibs-foundation does not; every framework
        // module re-exports it (Sources/FoundationCompat).
        .target(name: "FoundationCompat", dependencies: ["Combine", "COSLock", "CFoundationTypes", "CFoundationHooks"]),
        // ProcessInfo's thermal state as a C enum (re-exported by FoundationCompat), and the
        // weak hooks through which BackgroundTasks answers FoundationCompat's power questions
        // (not re-exported).
        .target(name: "CFoundationTypes"),
        .target(name: "CFoundationHooks"),
        // Durable state in SQLite: pending requests, run log, checkpoints.
        .target(name: "SchedulerStore", dependencies: ["CSQLite", "SchedulerCore"]),
        // Durable state in PostgreSQL, shared by the replicas of a service (docs/replicas.md).
        .target(name: "PostgreSQLStore", dependencies: ["CLibPQ", "SchedulerStore", "SchedulerCore"]),
        // Readers of the Linux device (power, network) behind an injectable root.
        .target(name: "DeviceConditions", dependencies: ["SchedulerCore"]),
        // The Apple-compatible public API and the drivers that host the engine.
        .target(
            name: "BackgroundTasks",
            dependencies: ["SchedulerCore", "SchedulerStore", "PostgreSQLStore", "DeviceConditions", "CUIKitTypes", "DaemonProtocol", "Combine", "COSLock", "FoundationCompat", "CObjectMaking", "CFoundationTypes", "CFoundationHooks"]
        ),
        // bgtaskd's logic as a library: the engine host for every installed app, the socket
        // server, the launcher and budget enforcement (docs/daemon.md).
        .target(
            name: "BGTaskDaemon",
            dependencies: ["BackgroundTasks", "SchedulerCore", "SchedulerStore", "DeviceConditions", "DaemonProtocol", "ProcessSupervision", "UserNotifications"]
        ),
        // The daemon executable: parses its flags and runs BGTaskDaemon.
        .executableTarget(name: "bgtaskd", dependencies: ["BGTaskDaemon", "SchedulerCore"]),
        // Virtual-time driver and simulated devices for tests and the demo.
        .target(
            name: "BackgroundTasksTesting",
            dependencies: ["BackgroundTasks", "SchedulerCore"]
        ),
        // The example app: a feed reader written as an iOS developer would.
        .target(name: "FeedReaderExample", dependencies: ["BackgroundTasks", "BackgroundTasksTesting", "SchedulerCore"], path: "Examples/FeedReader/Sources/FeedReaderExample"),
        .executableTarget(name: "feedreader", dependencies: ["FeedReaderExample", "BackgroundTasks", "SchedulerCore"], path: "Examples/FeedReader/Sources/feedreader"),
        // The command-line tool.
        .executableTarget(
            name: "bgtask",
            dependencies: ["BackgroundTasks", "BackgroundTasksTesting", "FeedReaderExample", "SchedulerCore", "SchedulerStore", "PostgreSQLStore", "DeviceConditions", "DaemonProtocol", "BGTaskDaemon", "UserNotifications"]
        ),
        // Release-built benchmarks (`swift run -c release bgtask-bench`).
        .executableTarget(
            name: "bgtask-bench",
            dependencies: ["BackgroundTasks", "BackgroundTasksTesting", "FeedReaderExample", "SchedulerCore", "SchedulerStore", "CSQLite", "BGTaskDaemon", "DaemonProtocol", "ProcessSupervision", "PostgreSQLStore", "CLibPQ", "ProbeSupport"],
            path: "Benchmarks/bgtask-bench"
        ),
        // How the probes below write to standard output (unbuffered) and fail.
        .target(name: "ProbeSupport", path: "Tests/ProbeSupport"),
        // A child process for the SIGKILL durability test: submits in a loop, acknowledging each.
        .executableTarget(
            name: "bgtask-durability-probe",
            dependencies: ["BackgroundTasks", "SchedulerStore", "ProbeSupport", "SchedulerCore"],
            path: "Tests/DurabilityProbe"
        ),
        // One replica of a service for the replica tests: bootstraps the embedded scheduler on
        // BGTASK_STORE_URL, submits its share, records every run it starts.
        .executableTarget(
            name: "bgtask-replica-probe",
            dependencies: ["BackgroundTasks", "ProbeSupport", "SchedulerCore"],
            path: "Tests/ReplicaProbe"
        ),
        // A child process for the two-process ownership test: one process of an app, driven by stdin.
        .executableTarget(
            name: "bgtask-ownership-probe",
            dependencies: ["BackgroundTasks", "DeviceConditions", "ProbeSupport", "SchedulerCore"],
            path: "Tests/OwnershipProbe"
        ),
        // An embedded app that runs one task of each ordinary handler kind and then idles,
        // for the test that it then takes no wakeups (IdleWakeupTests).
        .executableTarget(
            name: "bgtask-idle-probe",
            dependencies: ["BackgroundTasks", "DeviceConditions", "ProbeSupport", "SchedulerCore"],
            path: "Tests/IdleProbe"
        ),
        // An app for the daemon's end-to-end tests: installed with bgtaskd, launched by it,
        // its handlers' behaviour chosen by its launch arguments (complete, hang, crash...).
        .executableTarget(
            name: "bgtask-daemon-testapp",
            dependencies: ["BackgroundTasks", "UserNotifications"],
            path: "Tests/DaemonTestApp"
        ),
        // The app bgtask-bench installs with bgtaskd: a refresh handler that records when it
        // starts (launch benchmarks), or a loop of submits (the concurrent-submit benchmark).
        .executableTarget(
            name: "bgtask-bench-app",
            dependencies: ["BackgroundTasks", "SchedulerCore"],
            path: "Benchmarks/BenchApp"
        ),
        // iOS-shaped code compiled in Swift 5 language mode (docs/porting.md): a library the
        // source-compatibility tests run, and a real process around it.
        .target(
            name: "IOSShapedApp",
            dependencies: ["BackgroundTasks", "Network"],
            path: "Tests/IOSShapedApp",
            // A warning here ("default will never be executed", a Sendable complaint) is
            // iOS code that would not compile cleanly: the build fails on it.
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error)]
        ),
        // Code written before Swift concurrency and iOS 10 (Swift 5 mode): a call into the
        // main actor from a global queue and the deprecated local-notification API, which
        // Xcode warns about too, stay warnings here; every other warning fails the build.
        .target(
            name: "PreconcurrencyApp",
            dependencies: ["BackgroundTasks", "UIKit", "WidgetKit"],
            path: "Tests/PreconcurrencyApp",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error), .treatWarning("ActorIsolatedCall", as: .warning),
                            .treatWarning("DeprecatedDeclaration", as: .warning)]
        ),
        .executableTarget(
            name: "ios-shaped-app",
            dependencies: ["BackgroundTasks", "IOSShapedApp"],
            path: "Tests/ios-shaped-app",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error)]
        ),
        // `import UIKit` as iOS code writes it: the UIApplication part, from BackgroundTasks.
        .target(name: "UIKit", dependencies: ["BackgroundTasks", "SchedulerCore", "UserNotifications", "CUIKitModuleMap", "_Testing_UIKit"]),
        // Swift Testing's cross-import overlay for UIKit, which the toolchain names but does
        // not ship on Linux: empty, so that a test file importing Testing and UIKit compiles.
        .target(name: "_Testing_UIKit"),
        // `import SwiftUI` for an app's lifecycle and background tasks (App, scenes, scene
        // phase, `.backgroundTask`), its window shown without a screen; nothing is drawn
        // (docs/porting.md, "A SwiftUI app").
        .target(name: "SwiftUI", dependencies: ["BackgroundTasks", "UIKit", "SchedulerCore"]),
        // `import UserNotifications` for an app's local notifications: scheduled on the
        // scheduler's clock, shown as lines (docs/porting.md, "Local notifications").
        .target(name: "UserNotifications", dependencies: ["BackgroundTasks", "SchedulerCore", "SchedulerStore", "CUserNotificationsTypes", "FoundationCompat"]),
        // UserNotifications' enums as C enums, imported as open (non-frozen) enums as on iOS.
        .target(name: "CUserNotificationsTypes"),
        // `import WidgetKit` for the app's side of widgets: `WidgetCenter` (Linux has no
        // widgets: reload requests are noted; docs/porting.md, "Widgets").
        .target(name: "WidgetKit", dependencies: ["BackgroundTasks", "CWidgetKitTypes", "FoundationCompat"]),
        // WidgetKit's `WidgetFamily` as a C enum, imported as an open enum as on iOS.
        .target(name: "CWidgetKitTypes"),
        // `import Network` for path monitoring (`NWPathMonitor`): the machine's interfaces and
        // routes, or a simulated device's network (docs/porting.md, "Network paths").
        .target(name: "Network", dependencies: ["BackgroundTasks", "DeviceConditions", "SchedulerCore", "FoundationCompat"]),
        // `import SystemConfiguration` for network reachability (`SCNetworkReachability`),
        // answered by Network's path monitor (docs/porting.md, "Network reachability").
        .target(name: "SystemConfiguration", dependencies: ["Network", "FoundationCompat"]),
        // `import os` as iOS code writes it: Logger, OSLog and os_log over standard error,
        // and os_unfair_lock.
        .target(name: "os", dependencies: ["SchedulerCore", "COSModuleMap", "COSLock", "FoundationCompat"]),
        // `os_unfair_lock` in C, over Linux's priority-inheritance futexes (Apple's <os/lock.h>;
        // re-exported by os and by BackgroundTasks, as Apple's Foundation brings it).
        .target(name: "COSLock"),
        // Creating an NSObject subclass from its class, as `[[cls alloc] init]` does on iOS
        // (Sources/CObjectMaking/ObjectMaking.c): app and scene delegates given by type.
        .target(name: "CObjectMaking"),
        // `import OSLog` as iOS code writes it: re-exports os.
        .target(name: "OSLog", dependencies: ["os"]),
        // The Clang module `os` with its submodule `log`, so that `import os.log` resolves.
        .systemLibrary(name: "COSModuleMap", path: "Sources/COSModuleMap"),
        // The Clang module `UIKit` with the C entry point `@UIApplicationMain` compiles to.
        .systemLibrary(name: "CUIKitModuleMap", path: "Sources/CUIKitModuleMap"),
        // An iOS app delegate (`@main class AppDelegate: UIResponder, UIApplicationDelegate`)
        // compiled in Swift 5 language mode, run by DaemonTests embedded and under bgtaskd.
        .executableTarget(
            name: "ios-appdelegate-app",
            dependencies: ["BackgroundTasks", "UIKit", "UserNotifications"],
            path: "Tests/AppDelegateApp",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error)]
        ),
        // A scene-based iOS app (AppDelegate and SceneDelegate), Swift 5 mode, run by DaemonTests.
        .executableTarget(
            name: "ios-scene-app",
            dependencies: ["BackgroundTasks", "UIKit"],
            path: "Tests/SceneApp",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error)]
        ),
        // A SwiftUI app (App, scene phase, .backgroundTask, a delegate adaptor), Swift 5 mode,
        // run by DaemonTests.
        .executableTarget(
            name: "ios-swiftui-app",
            dependencies: ["BackgroundTasks", "SwiftUI"],
            path: "Tests/SwiftUIApp",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error)]
        ),
        // Files that import Foundation alone, made to see what Apple's Foundation brings by
        // importing FoundationCompat into every file, as an app's target does (docs/
        // porting.md, "Files that import Foundation alone"). Swift 5 mode.
        .target(
            name: "FoundationOnlyFiles",
            dependencies: ["FoundationCompat"],
            path: "Tests/FoundationOnlyFiles",
            swiftSettings: [.swiftLanguageMode(.v5), .treatAllWarnings(as: .error), .enableUpcomingFeature("MemberImportVisibility"),
                            .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "FoundationCompat"])]
        ),
        // An app's own framework whose types share names with the package's engine.
        .target(name: "AppOwnTypes", path: "Tests/AppOwnTypes"),
        // The same shapes in Swift 6 language mode, and tests that run both.
        .testTarget(
            name: "SourceCompatibilityTests",
            dependencies: ["BackgroundTasks", "BackgroundTasksTesting", "SchedulerCore", "DeviceConditions", "IOSShapedApp", "UIKit", "os", "SwiftUI", "UserNotifications", "WidgetKit", "OSLog", "Combine", "PreconcurrencyApp", "Network", "FoundationOnlyFiles", "AppOwnTypes", "SystemConfiguration"],
            swiftSettings: [.treatAllWarnings(as: .error)]
        ),
        .testTarget(name: "SchedulerCoreTests", dependencies: ["SchedulerCore"]),
        .testTarget(name: "CombineTests", dependencies: ["Combine"]),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "BackgroundTasks", "BackgroundTasksTesting", "DeviceConditions", "SchedulerCore", "ProbeSupport"]),
        .testTarget(name: "UserNotificationsTests", dependencies: ["UserNotifications", "BackgroundTasks", "SchedulerCore"]),
        .testTarget(name: "SchedulerStoreTests", dependencies: ["SchedulerStore", "SchedulerCore"]),
        // One store test suite run against both stores (SQLite in memory, and a throwaway
        // PostgreSQL server), and the PostgreSQL store's own tests.
        // Replicas as processes on that server too (bgtask-replica-probe).
        .testTarget(name: "StoreContractTests", dependencies: ["PostgreSQLStore", "SchedulerStore", "SchedulerCore", "bgtask-replica-probe", "bgtask"]),
        .testTarget(name: "DeviceConditionsTests", dependencies: ["DeviceConditions", "SchedulerCore", "ProbeSupport"]),
        .testTarget(name: "DaemonProtocolTests", dependencies: ["DaemonProtocol", "SchedulerCore", "CLinux"]),
        .testTarget(name: "ProcessSupervisionTests", dependencies: ["ProcessSupervision", "SchedulerCore", "CLinux"]),
        // End to end: a real bgtaskd, the example app and bgtask, as processes.
        .testTarget(
            name: "DaemonTests",
            dependencies: ["BGTaskDaemon", "ProcessSupervision", "BackgroundTasks", "DaemonProtocol", "SchedulerStore", "SchedulerCore", "ProbeSupport", "bgtaskd", "bgtask", "feedreader", "bgtask-daemon-testapp", "ios-appdelegate-app", "ios-scene-app", "ios-swiftui-app"]
        ),
        .testTarget(
            name: "BackgroundTasksTests",
            dependencies: [
                "BackgroundTasks", "BackgroundTasksTesting", "SchedulerCore", "SchedulerStore", "DeviceConditions", "DaemonProtocol", "os", "FoundationCompat", "CFoundationHooks",
                "FeedReaderExample", "feedreader", "bgtask-durability-probe", "bgtask-ownership-probe", "bgtask-idle-probe", "bgtask", "ios-shaped-app",
                "ProbeSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
