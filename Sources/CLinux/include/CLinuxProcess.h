#ifndef CLINUX_PROCESS_H
#define CLINUX_PROCESS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>

/// Where a spawn failed, for the error message (docs/process-supervision.md).
enum {
    CLINUX_SPAWN_STAGE_NONE = 0,
    /// Creating the error pipe or the process itself (fork/clone3/posix_spawn) failed.
    CLINUX_SPAWN_STAGE_CREATE = 1,
    /// setpgid(0, 0) in the child failed.
    CLINUX_SPAWN_STAGE_PROCESS_GROUP = 2,
    /// dup2 of a standard stream failed.
    CLINUX_SPAWN_STAGE_STANDARD_STREAMS = 3,
    /// chdir to the working directory failed.
    CLINUX_SPAWN_STAGE_WORKING_DIRECTORY = 4,
    /// execve failed (ENOENT, EACCES, ENOEXEC...).
    CLINUX_SPAWN_STAGE_EXEC = 5,
    /// pidfd_open after posix_spawn failed (the child was killed and reaped).
    CLINUX_SPAWN_STAGE_PIDFD = 6,
    /// Moving the child into its cgroup after posix_spawn failed (the child was killed).
    CLINUX_SPAWN_STAGE_CGROUP = 7,
};

/// What to start. Every array and string is prepared by the caller before the call: the
/// child of clone3 runs only async-signal-safe calls (setpgid, sigaction, sigprocmask,
/// dup2, close_range, chdir, execve, write, _exit) and never allocates.
typedef struct {
    /// Absolute path of the executable.
    const char *path;
    /// NULL-terminated argument vector (argv[0] included).
    char *const *argv;
    /// NULL-terminated environment, exactly what the child gets.
    char *const *envp;
    /// Working directory, or NULL to keep the caller's.
    const char *directory;
    /// Descriptors to install as 0, 1 and 2, or -1 to inherit the caller's.
    int stdin_fd;
    int stdout_fd;
    int stderr_fd;
    /// An O_DIRECTORY descriptor of the cgroup v2 directory to start in, or -1.
    int cgroup_fd;
    /// When non-zero, clone3 is not tried: the posix_spawn path is used (tests of the fallback).
    int force_posix_spawn;
} clinux_spawn_request;

/// What happened.
typedef struct {
    /// The child's pid (also its process group), or -1.
    int32_t pid;
    /// A pidfd for the child (O_CLOEXEC), or -1.
    int32_t pidfd;
    /// 1 when clone3 was used, 0 for the posix_spawn fallback.
    int32_t used_clone3;
    /// 1 when the child started inside `cgroup_fd` before running anything (CLONE_INTO_CGROUP).
    int32_t started_in_cgroup;
    /// errno of the failure, 0 on success.
    int32_t error;
    /// CLINUX_SPAWN_STAGE_* of the failure.
    int32_t stage;
} clinux_spawn_result;

/// Starts `request->path` in its own process group with only descriptors 0-2 open.
/// Tries clone3(CLONE_PIDFD [| CLONE_INTO_CGROUP]) first and falls back to posix_spawn +
/// pidfd_open when clone3 is unavailable (ENOSYS, EPERM, E2BIG). Returns 0 on success,
/// -1 with `result->error` and `result->stage` on failure (the failed child, if any, has
/// been reaped: exec failures never look like an exit 127).
int clinux_spawn(const clinux_spawn_request *request, clinux_spawn_result *result);

/// pidfd_open(pid, 0) with O_CLOEXEC semantics (pidfds are always close-on-exec).
/// Returns the descriptor or -1 with errno.
int clinux_pidfd_open(int32_t pid);

/// wait4(pid, &status, options, &usage) for exactly this child. Returns the pid, 0 when
/// WNOHANG and it is still running, or -1 with errno.
int32_t clinux_wait4(int32_t pid, int *status, int options, struct rusage *usage);

/// The WNOHANG flag (a macro Swift may not import).
int clinux_wnohang(void);

#endif
