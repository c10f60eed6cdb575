// The target holds only the enums of include/CUIKitTypes.h; a C target needs one source file.
#include "CUIKitTypes.h"
