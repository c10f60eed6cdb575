#include <libpq-fe.h>

/// The PG_DIAG_* field codes are character-literal macros (postgres_ext.h), which Swift does
/// not import; these name the fields the store reads from an error.
static inline int clibpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int clibpq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int clibpq_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }

/// A notice processor that drops the server's notices, which libpq's default one prints to
/// standard error (for example "relation already exists, skipping"): the store reports what
/// matters through its errors, and a library must not write to a program's stderr.
static inline void clibpq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

static inline void clibpq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, clibpq_ignore_notice, 0);
}
