// Core Foundation's names for the standard Info.plist keys, which SDKs read the app's name and
// version with (`Bundle.main.infoDictionary?[kCFBundleNameKey as String]`: an analytics SDK's
// context, the seventeenth outside probe). Apple's Foundation brings them with Core
// Foundation; swift-corelibs-foundation keeps Core Foundation to itself.
//
// Apple declares them `CFString!`, which Foundation bridges to `String`; on Linux Foundation
// bridges nothing to Core Foundation's types (the toolchain's `CoreFoundation` module declares
// `CFString` and these very names, as `CFStringRef`s no Swift code can read as a string), so
// they are Strings with Apple's values: `kCFBundleNameKey as String`, as SDKs write it, is
// then a plain coercion (no warning), and the key reads what `Bundle.main` read from its
// Info.plist (docs/porting.md, "`Bundle.main` on Linux"). A file that also imports
// `CoreFoundation` sees both: `as String` picks these; a bare `kCFBundleNameKey` is ambiguous.

/// `"CFBundleInfoDictionaryVersion"` (Apple's Core Foundation: `kCFBundleInfoDictionaryVersionKey`).
public var kCFBundleInfoDictionaryVersionKey: String { "CFBundleInfoDictionaryVersion" }
/// `"CFBundleExecutable"` (Apple's Core Foundation: `kCFBundleExecutableKey`).
public var kCFBundleExecutableKey: String { "CFBundleExecutable" }
/// `"CFBundleIdentifier"` (Apple's Core Foundation: `kCFBundleIdentifierKey`).
public var kCFBundleIdentifierKey: String { "CFBundleIdentifier" }
/// `"CFBundleVersion"`, the build number (Apple's Core Foundation: `kCFBundleVersionKey`).
public var kCFBundleVersionKey: String { "CFBundleVersion" }
/// `"CFBundleDevelopmentRegion"` (Apple's Core Foundation: `kCFBundleDevelopmentRegionKey`).
public var kCFBundleDevelopmentRegionKey: String { "CFBundleDevelopmentRegion" }
/// `"CFBundleName"` (Apple's Core Foundation: `kCFBundleNameKey`).
public var kCFBundleNameKey: String { "CFBundleName" }
/// `"CFBundleLocalizations"` (Apple's Core Foundation: `kCFBundleLocalizationsKey`).
public var kCFBundleLocalizationsKey: String { "CFBundleLocalizations" }
