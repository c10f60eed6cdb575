// The target holds the declarations of include/CFoundationHooks.h; a C target needs one source file.
#include "CFoundationHooks.h"
