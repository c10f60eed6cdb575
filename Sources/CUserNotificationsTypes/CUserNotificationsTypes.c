// The target holds only the enums of include/CUserNotificationsTypes.h; a C target needs one source file.
#include "CUserNotificationsTypes.h"
