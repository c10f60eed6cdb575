// Creating an object from its class without the Objective-C runtime. iOS makes an app's
// delegates from their classes (`@UIApplicationDelegateAdaptor(AppDelegate.self)`, a scene
// configuration's `delegateClass`) with `[[cls alloc] init]`, and such classes are usually
// `NSObject` subclasses whose `init()` is not `required`, so Swift's own `type.init()` cannot
// be written for them. Swift's class metadata can do it: every class's vtable has a slot for
// `NSObject.init()`'s allocating entry, which each subclass fills with the `init()` it
// declares or inherits (a class that has none gets a stub that stops the program with
// "Use of unimplemented initializer"). The runtime's `swift_lookUpClassMethod` finds a
// class's entry for a method descriptor, as compiled code dispatches a resilient class's
// methods; the entry is called with Swift's calling convention, the metatype as its `self`
// (`swift_context` is the `swiftself` register).
#include "CObjectMaking.h"

struct SwiftMethodDescriptor;
struct SwiftClassDescriptor;

// Foundation's descriptors of `NSObject.init()`'s allocating entry and of the class NSObject,
// by their mangled names (`swift demangle`: "method descriptor for
// Foundation.NSObject.__allocating_init() -> Foundation.NSObject", "nominal type descriptor
// for Foundation.NSObject").
extern const struct SwiftMethodDescriptor nsobject_allocating_init_descriptor
    __asm__("$s10Foundation8NSObjectCACycfCTq");
extern const struct SwiftClassDescriptor nsobject_class_descriptor
    __asm__("$s10Foundation8NSObjectCMn");

// Swift's runtime (swift/Runtime/Metadata.h).
extern void *swift_lookUpClassMethod(const void *metadata, const struct SwiftMethodDescriptor *method,
                                     const struct SwiftClassDescriptor *description);

typedef void *(*AllocatingInitializer)(const void *metatype __attribute__((swift_context)))
    __attribute__((swiftcall));

void *bgtask_make_nsobject(const void *metadata) {
    AllocatingInitializer initializer = (AllocatingInitializer)swift_lookUpClassMethod(
        metadata, &nsobject_allocating_init_descriptor, &nsobject_class_descriptor);
    return initializer(metadata);
}
