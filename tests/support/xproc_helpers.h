/*
 * xproc_helpers.h - helpers of the cross-process tests (tests/test_xproc_*.c):
 * a traced process and a controller are a parent and a forked child that
 * talk through pipes; children report through their exit status.
 */
#ifndef XPROC_HELPERS_H
#define XPROC_HELPERS_H

#include <stdint.h>
#include <sys/types.h>

/* A uid and gid no account on a test machine has (setresuid needs no passwd entry). */
#define XP_OTHER_UID 54321u
#define XP_THIRD_UID 54322u

/* One byte through a pipe; xp_recv returns it, or -1 after timeout_ms or at EOF. */
void xp_send(int fd, char c);
int xp_recv(int fd, int timeout_ms);

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

#endif
