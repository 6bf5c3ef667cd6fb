// The few Linux calls that Swift cannot import directly (variadic or macro-based).
#ifndef TANDEM_SYSTEM_SHIM_H
#define TANDEM_SYSTEM_SHIM_H

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <termios.h>
#include <unistd.h>

/// Sets the calling thread's timer slack, in nanoseconds (prctl is variadic).
static inline int tandem_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

/// Names the calling thread (at most 15 characters show), as `top -H` and debuggers list it.
static inline int tandem_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// The size of the terminal on `fd` in character cells, or -1 if it is not a terminal.
static inline int tandem_terminal_size(int fd, unsigned short *columns, unsigned short *rows) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return -1;
    *columns = size.ws_col;
    *rows = size.ws_row;
    return 0;
}

/// Waits like poll(2) but with a timeout in nanoseconds (negative: indefinitely): ppoll through
/// syscall(2), because glibc declares ppoll only under _GNU_SOURCE and syscall is variadic.
static inline int tandem_poll_nanoseconds(struct pollfd *descriptors, unsigned long count, long long timeout) {
    if (timeout < 0) return (int)syscall(SYS_ppoll, descriptors, count, (struct timespec *)0, (void *)0, 0);
    struct timespec spec = { (time_t)(timeout / 1000000000LL), (long)(timeout % 1000000000LL) };
    return (int)syscall(SYS_ppoll, descriptors, count, &spec, (void *)0, 0);
}

// ---- Peer credentials of a UNIX-domain socket, and what a spawned mpv inherits (issue 12) ---
// glibc declares `struct ucred` only under _GNU_SOURCE; this struct has its layout (pid, uid,
// gid, as the kernel writes them for SO_PEERCRED).
#include <sys/socket.h>
#include <sys/types.h>

struct tandem_peer_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// The process, user and group at the other end of the connected UNIX-domain socket `fd` (for
/// a client, the process that listened: the server), as SO_PEERCRED gives them; -1 and errno
/// on failure.
static inline int tandem_get_peer_credentials(int fd, struct tandem_peer_credentials *credentials) {
    socklen_t length = sizeof *credentials;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, credentials, &length);
}

// glibc (2.34 and later) declares this only under _GNU_SOURCE.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// Makes a spawned child close every descriptor from `from` up before it runs: mpv inherits
/// its standard input, output and error, and nothing else of ours.
static inline int tandem_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
// ---- end of the peer credentials and spawning block --------------------------------------

#endif
