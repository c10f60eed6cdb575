#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro cast of -1 that Swift does not import.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return (sqlite3_destructor_type)-1;
}
