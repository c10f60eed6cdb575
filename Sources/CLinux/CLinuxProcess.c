#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "CLinuxProcess.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#define CLINUX_CLONE_INTO_CGROUP 0x200000000ULL
#define CLINUX_CLOSE_RANGE_CLOEXEC (1U << 2)

/// struct clone_args up to `cgroup` (CLONE_ARGS_SIZE_VER2, 88 bytes), declared here so
/// the shim does not depend on the kernel headers' version.
struct clinux_clone_args {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
    uint64_t set_tid;
    uint64_t set_tid_size;
    uint64_t cgroup;
};

int clinux_pidfd_open(int32_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int32_t clinux_wait4(int32_t pid, int *status, int options, struct rusage *usage) {
    return (int32_t)wait4((pid_t)pid, status, options, usage);
}

int clinux_wnohang(void) { return WNOHANG; }

/// The failure report the child writes into the CLOEXEC pipe: stage and errno.
struct child_report {
    int32_t stage;
    int32_t error;
};

static void child_fail(int pipe_fd, int stage) {
    struct child_report report = { stage, errno };
    ssize_t ignored = write(pipe_fd, &report, sizeof(report));
    (void)ignored;
    _exit(127);
}

/// Installs `fd` as `target` (0, 1 or 2) in the child. dup2 clears FD_CLOEXEC on the
/// copy; when the numbers are equal dup2 does nothing, so the flag is cleared by hand.
static int child_install(int fd, int target) {
    if (fd < 0) return 0;
    if (fd == target) {
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0) return -1;
        return fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
    }
    return dup2(fd, target) < 0 ? -1 : 0;
}

/// Runs in the child of clone3: async-signal-safe calls only, no allocation.
static void child_run(const clinux_spawn_request *request, int pipe_fd) {
    if (setpgid(0, 0) != 0) child_fail(pipe_fd, CLINUX_SPAWN_STAGE_PROCESS_GROUP);
    // Signal dispositions the daemon ignores (SIGPIPE) and its thread's mask would
    // otherwise be inherited across execve.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof(fallback));
    fallback.sa_handler = SIG_DFL;
    for (int signal_number = 1; signal_number < NSIG; signal_number++) {
        if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
        (void)sigaction(signal_number, &fallback, NULL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    (void)sigprocmask(SIG_SETMASK, &empty, NULL);

    if (child_install(request->stdin_fd, 0) != 0 || child_install(request->stdout_fd, 1) != 0
        || child_install(request->stderr_fd, 2) != 0) {
        child_fail(pipe_fd, CLINUX_SPAWN_STAGE_STANDARD_STREAMS);
    }
    // Everything above 2 closes at execve (the report pipe included, which is how the
    // parent learns that execve succeeded).
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, CLINUX_CLOSE_RANGE_CLOEXEC) != 0)
#endif
    {
        struct rlimit limit;
        long highest = 65536;
        if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t)(1 << 20)) {
            highest = (long)limit.rlim_cur;
        }
        for (long fd = 3; fd < highest; fd++) {
            int flags = fcntl((int)fd, F_GETFD);
            if (flags >= 0 && !(flags & FD_CLOEXEC)) (void)fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
    if (request->directory != NULL && chdir(request->directory) != 0) {
        child_fail(pipe_fd, CLINUX_SPAWN_STAGE_WORKING_DIRECTORY);
    }
    execve(request->path, request->argv, request->envp);
    child_fail(pipe_fd, CLINUX_SPAWN_STAGE_EXEC);
}

/// Reads the child's report: 0 bytes means execve succeeded (the pipe closed on exec).
static int read_report(int fd, struct child_report *report) {
    size_t got = 0;
    while (got < sizeof(*report)) {
        ssize_t count = read(fd, (char *)report + got, sizeof(*report) - got);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;
        got += (size_t)count;
    }
    return got == sizeof(*report) ? 1 : 0;
}

static int spawn_clone3(const clinux_spawn_request *request, clinux_spawn_result *result) {
#ifdef SYS_clone3
    int report_pipe[2];
    if (pipe2(report_pipe, O_CLOEXEC) != 0) {
        result->error = errno;
        result->stage = CLINUX_SPAWN_STAGE_CREATE;
        return -1;
    }
    int pidfd = -1;
    struct clinux_clone_args args;
    memset(&args, 0, sizeof(args));
    args.flags = CLONE_PIDFD;
    args.pidfd = (uint64_t)(uintptr_t)&pidfd;
    args.exit_signal = SIGCHLD;
    if (request->cgroup_fd >= 0) {
        args.flags |= CLINUX_CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)request->cgroup_fd;
    }
    long pid = syscall(SYS_clone3, &args, sizeof(args));
    if (pid == 0) {
        close(report_pipe[0]);
        child_run(request, report_pipe[1]);
        _exit(127); // not reached
    }
    int saved = errno;
    close(report_pipe[1]);
    if (pid < 0) {
        close(report_pipe[0]);
        result->error = saved;
        result->stage = CLINUX_SPAWN_STAGE_CREATE;
        return -1;
    }
    struct child_report report;
    int failed = read_report(report_pipe[0], &report);
    close(report_pipe[0]);
    if (failed) {
        int status;
        while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {}
        close(pidfd);
        result->error = report.error;
        result->stage = report.stage;
        return -1;
    }
    result->pid = (int32_t)pid;
    result->pidfd = pidfd;
    result->used_clone3 = 1;
    result->started_in_cgroup = request->cgroup_fd >= 0 ? 1 : 0;
    return 0;
#else
    (void)request;
    result->error = ENOSYS;
    result->stage = CLINUX_SPAWN_STAGE_CREATE;
    return -1;
#endif
}

static int spawn_posix(const clinux_spawn_request *request, clinux_spawn_result *result) {
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_t actions;
    int code = posix_spawnattr_init(&attributes);
    if (code != 0) { result->error = code; result->stage = CLINUX_SPAWN_STAGE_CREATE; return -1; }
    code = posix_spawn_file_actions_init(&actions);
    if (code != 0) {
        posix_spawnattr_destroy(&attributes);
        result->error = code; result->stage = CLINUX_SPAWN_STAGE_CREATE; return -1;
    }
    sigset_t all, empty;
    sigfillset(&all);
    sigemptyset(&empty);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &empty);
    int descriptors[3] = { request->stdin_fd, request->stdout_fd, request->stderr_fd };
    for (int target = 0; target < 3; target++) {
        // glibc clears FD_CLOEXEC when source and target are equal (since 2.29).
        if (descriptors[target] >= 0) posix_spawn_file_actions_adddup2(&actions, descriptors[target], target);
    }
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (request->directory != NULL) posix_spawn_file_actions_addchdir_np(&actions, request->directory);
    pid_t pid = -1;
    code = posix_spawn(&pid, request->path, &actions, &attributes, request->argv, request->envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (code != 0) {
        result->error = code;
        // glibc reports a failed chdir action and a failed execve the same way; say which
        // from the directory, which the caller checked just before.
        result->stage = CLINUX_SPAWN_STAGE_EXEC;
        return -1;
    }
    int pidfd = clinux_pidfd_open(pid);
    if (pidfd < 0) {
        int saved = errno;
        kill(pid, SIGKILL);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        result->error = saved;
        result->stage = CLINUX_SPAWN_STAGE_PIDFD;
        return -1;
    }
    result->pid = (int32_t)pid;
    result->pidfd = pidfd;
    result->used_clone3 = 0;
    result->started_in_cgroup = 0;
    return 0;
}

int clinux_spawn(const clinux_spawn_request *request, clinux_spawn_result *result) {
    memset(result, 0, sizeof(*result));
    result->pid = -1;
    result->pidfd = -1;
    if (!request->force_posix_spawn) {
        int outcome = spawn_clone3(request, result);
        if (outcome == 0) return 0;
        int code = result->error;
        // clone3 missing (ENOSYS, old kernel or a seccomp filter), refused (EPERM), or an
        // argument structure it does not know (E2BIG): fall back. Anything else is real.
        if (!(result->stage == CLINUX_SPAWN_STAGE_CREATE && (code == ENOSYS || code == EPERM || code == E2BIG))) return -1;
        memset(result, 0, sizeof(*result));
        result->pid = -1;
        result->pidfd = -1;
    }
    return spawn_posix(request, result);
}
