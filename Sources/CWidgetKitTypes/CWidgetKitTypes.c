// The target holds only the enum of include/CWidgetKitTypes.h; a C target needs one source file.
#include "CWidgetKitTypes.h"
