// Creating an object from its class, as Objective-C's `[[cls alloc] init]` does on Apple's
// platforms (ObjectMaking.c says how).
#ifndef C_OBJECT_MAKING_H
#define C_OBJECT_MAKING_H

/// A new instance of the class whose Swift metadata is `metadata` (a class derived from
/// Foundation's `NSObject`, or `NSObject` itself), made by its `init()`: the one it declares,
/// inherits or overrides. Returned at +1, as an allocating initializer returns it. A class
/// that does not have `init()` (it declares other designated initializers only) stops the
/// program in Swift's runtime with "Use of unimplemented initializer 'init()'", as the same
/// class made by Objective-C's runtime does on iOS.
void *_Nonnull bgtask_make_nsobject(const void *_Nonnull metadata);

#endif
