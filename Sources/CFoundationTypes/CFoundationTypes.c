// The target holds the declarations of include/CFoundationTypes.h; a C target needs one source file.
#include "CFoundationTypes.h"
