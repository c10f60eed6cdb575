// What `@UIApplicationMain` compiles to: `main` returns
// `UIApplicationMain(argc, argv, nil, NSStringFromClass(AppDelegate.self))`, both called as
// C functions. On Linux the two names are NSString pointers passed as untyped ones (the
// language has no Objective-C here); Sources/UIKit/ApplicationMainEntry.swift defines both
// symbols. Swift code calls the Swift `UIApplicationMain(_:_:_:_:)` instead: this one is
// unavailable to it, and there only for the compiler.
#ifndef SWIFT_BACKGROUND_TASKS_UIKIT_ENTRY_H
#define SWIFT_BACKGROUND_TASKS_UIKIT_ENTRY_H

int UIApplicationMain(int argc, char * _Nullable * _Nonnull argv,
                      void * _Nullable principalClassName, void * _Nullable delegateClassName)
    __attribute__((availability(swift, unavailable, message="the entry point @UIApplicationMain compiles to; call UIApplicationMain(_:_:_:_:) with Strings")));

#endif
