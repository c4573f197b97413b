/*
 * xproc_helpers.h - helpers of the cross-process tests (tests/test_xproc_*.c):
 * a traced process and a controller are a parent and a forked child that
 * talk through pipes; children report through their exit status.
 */
#ifndef XPROC_HELPERS_H
#define XPROC_HELPERS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* A uid and gid no account on a test machine has (setresuid needs no passwd entry). */
#define XP_OTHER_UID 54321u
#define XP_THIRD_UID 54322u

/* One byte through a pipe; xp_recv returns it, or -1 after timeout_ms or at EOF. */
void xp_send(int fd, char c);
int xp_recv(int fd, int timeout_ms);

/* How a traced child tells its parent an event id (a trace_event_id_t): 'i', then its bytes.
   xp_send_id _exits with 3 if the pipe fails; xp_recv_id returns 0, or -1 after 10 s or at EOF. */
void xp_send_id(int fd, uint32_t id);
int xp_recv_id(int fd, uint32_t *id);

/*
 * A forked traced child and its two pipes (up: child to parent, down:
 * parent to child). xp_child_start runs main(up, down) in the child (which
 * must not return; a watchdog kills it after 60 s), which first tells its
 * event id with xp_send_id: 0 once it is in c->id, else -1.
 * xp_child_close closes the pipes; xp_child_end kills, reaps and closes.
 */
typedef struct xp_child {
    pid_t pid;
    int up[2], down[2];
    uint32_t id;
} xp_child;
int xp_child_start(xp_child *c, void (*main)(int up, int down));
/* Sends the child a request byte and returns its one-byte answer (xp_recv: -1 after 10 s or at EOF). */
int xp_child_ask(xp_child *c, char request);
void xp_child_close(xp_child *c);
void xp_child_end(xp_child *c);

/* waitpid: the exit status, 128 + the signal for a killed child, -1 on error. */
int xp_wait(pid_t pid);

/* Drops to uid/gid for good (setgroups, setresgid, setresuid). 0 or an errno. */
int xp_become(uint32_t uid, uint32_t gid);

/* 1 if this process may switch users (root with CAP_SETUID): the permission tests need it. */
int xp_can_switch_users(void);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t xp_now_ns(void);

/* Removes /dev/shm/tracelog.<euid>.<pid> and every stream name of that process (test clean-up). */
void xp_remove_objects(uint32_t euid, uint32_t pid);

/* ---- a stand-in for the POSIX layer (tests of xproc/attach.c and remote.c) ---- */

/* What these tests put in a "stream buffer": a header the stand-in checks, a marker the traced side writes. */
#define XP_FAKE_MAGIC 0x4655425453455421ull
typedef struct xp_fake_stream {
    uint64_t magic, id;
    _Atomic uint64_t marker; /* 1000 + pid of the process that published it, + flags << 20 */
} xp_fake_stream;

/* Operations for tl_xproc_set_ops: check the header, publish (set a word bit, write the marker). */
extern const struct tl_xproc_ops xp_fake_ops;
/* The buffer published last, if it still is (else NULL). */
xp_fake_stream *xp_fake_current(void);

/*
 * A traced process: makes its control object (with bit 7 of its event word
 * set beforehand, which must survive), says 'r', then acts on announcements
 * seen through its event word until its parent sends 'q' or goes away; on
 * 'm' it writes the marker of its current buffer (u64, 0 if none).
 */
void xp_traced_main(int up, int down) __attribute__((noreturn));

#endif
