// Objects and collections as `%@` arguments, as Apple's Foundation takes them (docs/porting.md,
// "Logging"): `os_log("Submit of %@ failed: %@", log: log, type: .error, request, error as
// NSError)` with an `NSError`, an `NSNumber`, an `NSDate`, a `BGTaskRequest` (any `NSObject`),
// and a silent push's `userInfo` or a list of identifiers (`os_log("push %{public}@", log:
// .default, type: .info, userInfo)`, found by an outside compile probe in a public app's
// push handler). With `String(format:)` and `NSString(format:)` too: the conformances are
// Foundation's on Apple's platforms, so every module of this package brings them.

import Foundation

#if !canImport(ObjectiveC) && compiler(<6.4)
/// Any object may be a `CVarArg`, as on Apple's platforms, where `NSObject` is one: so it
/// may be an argument of `os_log`, `String(format:)` and `NSString(format:)`, and `%@`
/// shows its `description`, as Apple's `%@` does.
///
/// swift-corelibs-foundation up to Swift 6.3 makes only `NSString` (and `String`) a
/// `CVarArg`; Swift 6.4's adds this conformance itself (swift-corelibs-foundation#5490 and
/// its 6.4 cherry-pick #5492), so it is declared only for earlier compilers.
///
/// Sound on 6.3's Foundation, which is why the object is not passed as it is: its
/// `String(format:)` hands a `%@` argument to CoreFoundation as a CF object, which halts the
/// process for a plain Swift `NSObject` subclass or an `NSError` and prints a CF dump for an
/// `NSDate`. What the argument list carries instead is an `NSString` of the object's
/// `description` (``_cVarArgObject``), which CoreFoundation formats as it does any string.
/// The standard library asks for it, and keeps it alive until the formatting is done,
/// wherever there is no Objective-C runtime (`withVaList`, which `os_log`,
/// `String(format:)` and `NSString(format:)` use), as it does for `String`'s own
/// conformance in Foundation.
extension NSObject: @retroactive CVarArg, @retroactive _CVarArgObject {
    /// The object's address, as Apple encodes an object. Not what a format sees here: the
    /// standard library passes ``_cVarArgObject`` in its place for every directive, so
    /// `%p` or `%d` given an object print the address of its temporary description.
    public var _cVarArgEncoding: [Int] { _encodeBitsAsWords(self) }

    /// What the argument list carries: a string as it is, any other object's `description`
    /// as an `NSString`.
    public var _cVarArgObject: any CVarArg { self as? NSString ?? NSString(string: description) }
}
#endif

#if !canImport(ObjectiveC)
/// What the argument list carries for a collection: its description, as an `NSString`.
private func describedArgument(_ value: Any) -> any CVarArg {
    NSString(string: String(describing: value))
}

// Apple's Foundation makes String, Array, Dictionary and Set `CVarArg` (since Swift 3, by
// bridging them to NSArray...); swift-corelibs-foundation only String. As for an object,
// what the argument list carries is an `NSString` of the value's description (Swift's:
// `["a", "b"]`, where Apple's `%@` prints NSArray's `(a, b)` form on several lines).

extension Array: @retroactive CVarArg, @retroactive _CVarArgObject {
    /// Not what a format sees (``_cVarArgObject`` is passed in its place).
    public var _cVarArgEncoding: [Int] { _encodeBitsAsWords(self) }
    /// The array's description, as an `NSString`.
    public var _cVarArgObject: any CVarArg { describedArgument(self) }
}

extension Dictionary: @retroactive CVarArg, @retroactive _CVarArgObject {
    /// Not what a format sees (``_cVarArgObject`` is passed in its place).
    public var _cVarArgEncoding: [Int] { _encodeBitsAsWords(self) }
    /// The dictionary's description, as an `NSString`.
    public var _cVarArgObject: any CVarArg { describedArgument(self) }
}

extension Set: @retroactive CVarArg, @retroactive _CVarArgObject {
    /// Not what a format sees (``_cVarArgObject`` is passed in its place).
    public var _cVarArgEncoding: [Int] { _encodeBitsAsWords(self) }
    /// The set's description, as an `NSString`.
    public var _cVarArgObject: any CVarArg { describedArgument(self) }
}
#endif
