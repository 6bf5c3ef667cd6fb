// The few Linux calls that Swift cannot import directly (variadic, macro-based, or declared in
// headers that Swift's Glibc module does not cover, as sys/epoll.h and sys/eventfd.h).
#ifndef TANDEM_SYSTEM_SHIM_H
#define TANDEM_SYSTEM_SHIM_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
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

// MARK: epoll

/// epoll's readiness bits, as plain constants (the header declares them as enum members shadowed
/// by macros of the same name, which Swift does not import as numbers).
static const uint32_t tandem_epoll_in = EPOLLIN;
static const uint32_t tandem_epoll_out = EPOLLOUT;
static const uint32_t tandem_epoll_err = EPOLLERR;
static const uint32_t tandem_epoll_hup = EPOLLHUP;
static const int tandem_epoll_add = EPOLL_CTL_ADD;
static const int tandem_epoll_mod = EPOLL_CTL_MOD;
static const int tandem_epoll_del = EPOLL_CTL_DEL;

/// One ready descriptor as `tandem_epoll_wait` reports it: its events and the token it was
/// registered with. `struct epoll_event` is packed on x86-64, a layout Swift should not be
/// trusted to reproduce, so the shim copies events into this plain struct.
typedef struct {
    uint32_t events;
    uint64_t token;
} tandem_epoll_ready;

/// The most events one `tandem_epoll_wait` reports; more ready descriptors wait for the next.
#define TANDEM_EPOLL_BATCH 256

/// A new epoll instance, close-on-exec.
static inline int tandem_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// Adds, modifies or deletes `fd` in `epfd`, level-triggered, with `events` and `token`.
static inline int tandem_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

static inline int tandem_epoll_copy(const struct epoll_event *events, int count, tandem_epoll_ready *ready) {
    for (int index = 0; index < count; index++) {
        ready[index].events = events[index].events;
        ready[index].token = events[index].data.u64;
    }
    return count;
}

/// Waits for at most `timeout` nanoseconds (negative: indefinitely) with epoll_pwait2 (Linux
/// 5.11), and copies what is ready into `ready` (at most `capacity`, itself at most
/// TANDEM_EPOLL_BATCH). -1 with errno ENOSYS on an older kernel: then use a timer descriptor.
static inline int tandem_epoll_pwait2(int epfd, tandem_epoll_ready *ready, int capacity, long long timeout) {
    struct epoll_event events[TANDEM_EPOLL_BATCH];
    if (capacity > TANDEM_EPOLL_BATCH) capacity = TANDEM_EPOLL_BATCH;
    struct timespec spec = { (time_t)(timeout / 1000000000LL), (long)(timeout % 1000000000LL) };
    int count = epoll_pwait2(epfd, events, capacity, timeout < 0 ? (const struct timespec *)0 : &spec, (const __sigset_t *)0);
    return count < 0 ? count : tandem_epoll_copy(events, count, ready);
}

/// Waits like epoll_wait(2), `milliseconds` at most (-1: indefinitely), copying into `ready`.
static inline int tandem_epoll_wait(int epfd, tandem_epoll_ready *ready, int capacity, int milliseconds) {
    struct epoll_event events[TANDEM_EPOLL_BATCH];
    if (capacity > TANDEM_EPOLL_BATCH) capacity = TANDEM_EPOLL_BATCH;
    int count = epoll_wait(epfd, events, capacity, milliseconds);
    return count < 0 ? count : tandem_epoll_copy(events, count, ready);
}

/// A non-blocking, close-on-exec timer descriptor on CLOCK_MONOTONIC: how a loop waits to the
/// nanosecond where epoll_pwait2 is missing (it watches the timer with the sockets).
static inline int tandem_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/// Arms `fd` to expire once, `nanoseconds` from now (at least 1 ns; 0 or less disarms it).
static inline int tandem_timerfd_arm(int fd, long long nanoseconds) {
    struct itimerspec spec = { { 0, 0 }, { (time_t)(nanoseconds / 1000000000LL), (long)(nanoseconds % 1000000000LL) } };
    if (nanoseconds <= 0) spec.it_value.tv_sec = 0, spec.it_value.tv_nsec = 0;
    return timerfd_settime(fd, 0, &spec, (struct itimerspec *)0);
}

/// A non-blocking, close-on-exec eventfd counting from 0: the loop's wake-up descriptor.
static inline int tandem_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
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

// ---- Spawning that posix_spawn cannot do (issue 15) ----------------------------------------
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

/// posix_spawn's flag that makes the child a session leader (setsid), as a plain constant: glibc
/// declares POSIX_SPAWN_SETSID only under _GNU_SOURCE (its value, 0x80, is glibc's ABI).
#ifdef POSIX_SPAWN_SETSID
static const short tandem_posix_spawn_setsid = POSIX_SPAWN_SETSID;
#else
static const short tandem_posix_spawn_setsid = 0x80;
#endif

/// Starts `path` with `argv` and `envp` in a child that the kernel kills (SIGKILL) when the
/// thread that called this exits (prctl PR_SET_PDEATHSIG, which must run in the child before
/// exec, so posix_spawn cannot): call it from a thread that lives as long as the process. The
/// child gets standard input from /dev/null, standard output and error on `log` (created 0600,
/// truncated), nothing else of ours (descriptors 3 and up closed), an empty signal mask and the
/// default action for SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE and SIGCHLD. Between fork and
/// exec the child makes async-signal-safe calls only (the parent has other threads). Returns the
/// child's pid, or -errno (an exec failure included, carried back on a close-on-exec pipe).
static inline pid_t tandem_spawn_dying_with_parent(const char *path, char *const argv[], char *const envp[], const char *log) {
    int report[2];
    // pipe2 is declared only under _GNU_SOURCE: pipe, then close-on-exec on both ends.
    if (pipe(report) != 0) return -errno;
    fcntl(report[0], F_SETFD, FD_CLOEXEC);
    fcntl(report[1], F_SETFD, FD_CLOEXEC);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(report[0]);
        close(report[1]);
        return -error;
    }
    if (pid == 0) {
        int error = 0;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) error = errno;
        // The parent may have gone before the prctl took effect: then nobody would kill us.
        if (error == 0 && getppid() != parent) _exit(127);
        int input = error == 0 ? open("/dev/null", O_RDONLY) : -1;
        if (error == 0 && input < 0) error = errno;
        int output = error == 0 ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
        if (error == 0 && output < 0) error = errno;
        if (error == 0 && (dup2(input, 0) < 0 || dup2(output, 1) < 0 || dup2(output, 2) < 0)) error = errno;
        if (error == 0) {
            int keep = report[1];
            long highest = sysconf(_SC_OPEN_MAX);
            if (highest < 0 || highest > 65536) highest = 65536;
            for (int fd = 3; fd < highest; fd++) if (fd != keep) close(fd);
            sigset_t empty;
            sigemptyset(&empty);
            sigprocmask(SIG_SETMASK, &empty, 0);
            int defaults[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD };
            for (unsigned index = 0; index < sizeof defaults / sizeof defaults[0]; index++) signal(defaults[index], SIG_DFL);
            execve(path, argv, envp);
            error = errno;
        }
        ssize_t ignored = write(report[1], &error, sizeof error);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    int error = 0;
    ssize_t count;
    do { count = read(report[0], &error, sizeof error); } while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof error) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        return -(error ? error : ECHILD);
    }
    return pid;
}
// ---- end of the issue 15 spawning block ---------------------------------------------------

// ---- Processors and scheduling policies, for the wake guard ---------------------------------
#include <sched.h>

/// Bits in the processor masks below: 1,024 processors, as glibc's cpu_set_t.
#define TANDEM_CPU_MASK_WORDS (1024 / (8 * sizeof(unsigned long)))

/// The processors the calling thread may run on, written to `cpus` (at most `capacity`, lowest
/// first); returns how many, or -errno. sched_getaffinity through syscall(2): cpu_set_t's
/// macros are declared only under _GNU_SOURCE.
static inline int tandem_allowed_cpus(int *cpus, int capacity) {
    unsigned long mask[TANDEM_CPU_MASK_WORDS] = {0};
    long size = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (size < 0) return -errno;
    int count = 0;
    const int bits = 8 * (int)sizeof(unsigned long);
    for (int cpu = 0; cpu < size * 8 && count < capacity; cpu++) {
        if ((mask[cpu / bits] >> (cpu % bits)) & 1UL) cpus[count++] = cpu;
    }
    return count;
}

/// Pins the calling thread to processor `cpu`; 0 or -errno.
static inline int tandem_pin_thread_to_cpu(int cpu) {
    unsigned long mask[TANDEM_CPU_MASK_WORDS] = {0};
    const int bits = 8 * (int)sizeof(unsigned long);
    if (cpu < 0 || cpu >= (int)(sizeof mask * 8)) return -EINVAL;
    mask[cpu / bits] |= 1UL << (cpu % bits);
    return syscall(SYS_sched_setaffinity, 0, sizeof mask, mask) == 0 ? 0 : -errno;
}

/// Gives the calling thread Linux's idle policy (SCHED_IDLE, 5 in the kernel's ABI; glibc
/// names it only under _GNU_SOURCE): it runs only when nothing else on its processor wants to.
/// 0 or -errno.
static inline int tandem_set_idle_policy(void) {
    struct sched_param parameters = { .sched_priority = 0 };
    return syscall(SYS_sched_setscheduler, 0, 5, &parameters) == 0 ? 0 : -errno;
}
// ---- end of the wake guard block ------------------------------------------------------------


// ---- Kernel timestamps, thread identities and processor pinning, for the relay's own cost ----
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/uio.h>

/// What `tandem_read_transmit_stamps` reports of one transmit timestamp: the OPT_ID key (on a
/// TCP socket, the index of the last byte of the write it stamps, counted from when stamping
/// was enabled), the stage (SCM_TSTAMP_SCHED 1, SCM_TSTAMP_SND 0) and the software time.
typedef struct {
    uint32_t key;
    uint32_t stage;
    long long nanoseconds;
} tandem_transmit_stamp;

/// The stages of transmit timestamps, as plain constants.
static const uint32_t tandem_stamp_scheduled = SCM_TSTAMP_SCHED;
static const uint32_t tandem_stamp_sent = SCM_TSTAMP_SND;

/// The most stamps one `tandem_read_transmit_stamps` reads.
#define TANDEM_STAMP_BATCH 32

/// Turns on software receive timestamps and software transmit timestamps (when the write
/// enters the packet scheduler and when the device takes it) with OPT_ID keys and no payload
/// looped back; 0 or -errno.
static inline int tandem_enable_timestamping(int fd) {
    unsigned int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_TX_SOFTWARE
        | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0 ? 0 : -errno;
}

static inline long long tandem_timespec_nanoseconds(const struct timespec *spec) {
    return (long long)spec->tv_sec * 1000000000LL + spec->tv_nsec;
}

/// Reads like recv(2) without blocking, and gives the software receive timestamp of the last
/// segment read (CLOCK_REALTIME nanoseconds; 0 when none came). Returns the count, 0 at end of
/// stream, or -errno (-EAGAIN when nothing waits).
static inline long tandem_receive_stamped(int fd, void *buffer, size_t length, long long *stamp) {
    struct iovec vector = { buffer, length };
    union { char bytes[CMSG_SPACE(sizeof(struct scm_timestamping)) + 64]; struct cmsghdr align; } control;
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    ssize_t count;
    do { count = recvmsg(fd, &message, MSG_DONTWAIT); } while (count < 0 && errno == EINTR);
    if (count < 0) return -errno;
    *stamp = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPING) {
            struct scm_timestamping stamps;
            memcpy(&stamps, CMSG_DATA(header), sizeof stamps);
            *stamp = tandem_timespec_nanoseconds(&stamps.ts[0]);
        }
    }
    return (long)count;
}

/// The layout of glibc's `struct mmsghdr` (declared only under _GNU_SOURCE).
struct tandem_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// Reads up to `capacity` (at most TANDEM_STAMP_BATCH) transmit timestamps from `fd`'s error
/// queue in one recvmmsg(2), without blocking; returns how many were written to `stamps`
/// (0 when the queue is empty), or -errno.
static inline int tandem_read_transmit_stamps(int fd, tandem_transmit_stamp *stamps, int capacity) {
    enum { space = CMSG_SPACE(sizeof(struct scm_timestamping)) + CMSG_SPACE(sizeof(struct sock_extended_err) + 64) + 64 };
    struct tandem_mmsghdr messages[TANDEM_STAMP_BATCH];
    union { char bytes[space]; struct cmsghdr align; } controls[TANDEM_STAMP_BATCH];
    if (capacity > TANDEM_STAMP_BATCH) capacity = TANDEM_STAMP_BATCH;
    memset(messages, 0, sizeof messages);
    for (int index = 0; index < capacity; index++) {
        messages[index].msg_hdr.msg_control = controls[index].bytes;
        messages[index].msg_hdr.msg_controllen = space;
    }
    int count;
    do { count = (int)syscall(SYS_recvmmsg, fd, messages, capacity, MSG_ERRQUEUE | MSG_DONTWAIT, (struct timespec *)0); }
    while (count < 0 && errno == EINTR);
    if (count < 0) return errno == EAGAIN ? 0 : -errno;
    int found = 0;
    for (int index = 0; index < count; index++) {
        struct msghdr *message = &messages[index].msg_hdr;
        long long nanoseconds = -1;
        int matched = 0;
        tandem_transmit_stamp stamp = { 0, 0, 0 };
        for (struct cmsghdr *header = CMSG_FIRSTHDR(message); header; header = CMSG_NXTHDR(message, header)) {
            if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_TIMESTAMPING) {
                struct scm_timestamping times;
                memcpy(&times, CMSG_DATA(header), sizeof times);
                nanoseconds = tandem_timespec_nanoseconds(&times.ts[0]);
            } else if ((header->cmsg_level == IPPROTO_IP && header->cmsg_type == IP_RECVERR)
                       || (header->cmsg_level == IPPROTO_IPV6 && header->cmsg_type == IPV6_RECVERR)) {
                struct sock_extended_err error;
                memcpy(&error, CMSG_DATA(header), sizeof error);
                if (error.ee_errno == ENOMSG && error.ee_origin == SO_EE_ORIGIN_TIMESTAMPING) {
                    stamp.key = error.ee_data;
                    stamp.stage = error.ee_info;
                    matched = 1;
                }
            }
        }
        if (matched && nanoseconds >= 0) {
            stamp.nanoseconds = nanoseconds;
            stamps[found++] = stamp;
        }
    }
    return found;
}

/// The calling thread's kernel id (gettid(2)), as /proc/self/task names it.
static inline int tandem_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

/// Pins thread (or process) `task` to processor `cpu`; 0 or -errno.
static inline int tandem_pin_task_to_cpu(int task, int cpu) {
    unsigned long mask[TANDEM_CPU_MASK_WORDS] = {0};
    const int bits = 8 * (int)sizeof(unsigned long);
    if (cpu < 0 || cpu >= (int)(sizeof mask * 8)) return -EINVAL;
    mask[cpu / bits] |= 1UL << (cpu % bits);
    return syscall(SYS_sched_setaffinity, task, sizeof mask, mask) == 0 ? 0 : -errno;
}

/// The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
static inline long long tandem_thread_cpu_nanoseconds(void) {
    struct timespec spec;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return tandem_timespec_nanoseconds(&spec);
}
// ---- end of the kernel timestamps block -------------------------------------------------------

// ---- One datagram to many addresses in one call ------------------------------------------------
// sendmmsg(2) is declared only under _GNU_SOURCE: the call goes through syscall(2), with the
// kernel's struct mmsghdr (`tandem_mmsghdr`, above).

/// The most datagrams one `tandem_send_to_many` sends.
#define TANDEM_DATAGRAM_BATCH 64

/// How far apart `tandem_send_to_many` finds the addresses: room for any socket address.
static const unsigned int tandem_address_stride = sizeof(struct sockaddr_storage);

/// Sends the `length` bytes at `bytes` as one datagram to each of `count` addresses (at most
/// TANDEM_DATAGRAM_BATCH) with one sendmmsg(2), without blocking: address `i` starts
/// `i * tandem_address_stride` bytes into `addresses` and is `lengths[i]` bytes long. Returns how
/// many were sent (the first ones: the first that fails stops it there), or -errno when the
/// first failed.
static inline int tandem_send_to_many(int fd, const void *bytes, size_t length, const void *addresses,
                                      const socklen_t *lengths, unsigned int count) {
    struct tandem_mmsghdr messages[TANDEM_DATAGRAM_BATCH];
    struct iovec vector = { (void *)bytes, length };
    if (count > TANDEM_DATAGRAM_BATCH) count = TANDEM_DATAGRAM_BATCH;
    memset(messages, 0, sizeof(struct tandem_mmsghdr) * count);
    for (unsigned int index = 0; index < count; index++) {
        messages[index].msg_hdr.msg_name = (char *)addresses + (size_t)index * tandem_address_stride;
        messages[index].msg_hdr.msg_namelen = lengths[index];
        messages[index].msg_hdr.msg_iov = &vector;
        messages[index].msg_hdr.msg_iovlen = 1;
    }
    long sent;
    do { sent = syscall(SYS_sendmmsg, fd, messages, count, MSG_NOSIGNAL | MSG_DONTWAIT); } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -errno : (int)sent;
}

#endif
