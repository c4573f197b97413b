/*
 * Other processes as /proc describes them: who a pid is (its token), its
 * credentials, and whether this process may trace it (design:
 * docs/design/cross-process.md, section 3.4). Nothing here trusts a pid to
 * name the same process twice: the token (pid and start time) does.
 */
#ifndef TRACELOG_XPROC_PROC_H
#define TRACELOG_XPROC_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* A process, as opposed to a pid: pid plus start time (clock ticks after boot). */
typedef struct tl_proc_token {
    uint32_t pid;
    uint64_t start;
} tl_proc_token;

typedef struct tl_proc_creds {
    uint32_t uid[3]; /* real, effective, saved */
    uint32_t gid[3];
} tl_proc_creds;

#define TL_CAP_SYS_PTRACE 19

/* The token of a live process. 0; ESRCH if there is no such process or it is a zombie; EIO if /proc is unreadable. */
int tl_proc_token_of(pid_t pid, tl_proc_token *out);
/* The parent of pid. 0, ESRCH or EIO. */
int tl_proc_parent_of(pid_t pid, pid_t *ppid);
/* 1 if the process the token names is still running (not a zombie). */
int tl_proc_alive(const tl_proc_token *t);
/* One u64 holding a token (pid in the high half, the start time's low 32 bits below): 0 never names a process. */
uint64_t tl_proc_token_pack(const tl_proc_token *t);
/* 1 if the packed token names a live process. */
int tl_proc_packed_alive(uint64_t packed);

/* Reads a whole small file (of /proc) into buf, NUL-terminated (cap >= 1). Its length, or -errno. */
ssize_t tl_proc_read_small(const char *path, char *buf, size_t cap);
/*
 * The name of thread ktid of process pid (its comm, as pthread_setname_np or
 * prctl(PR_SET_NAME) set it), from /proc/<pid>/task/<ktid>/comm; ktid 0:
 * the process's, /proc/<pid>/comm; pid 0: this process. Into buf (cap >= 1
 * bytes, NUL-terminated) without the kernel's newline, at most cap - 1
 * bytes, cut before a UTF-8 sequence rather than inside it. The text is the
 * traced program's choice: any bytes but NUL, control characters included,
 * so a caller that shows it escapes it. Reads at most 80 bytes, no
 * allocation. 0; ESRCH (no such process or thread: it ended), EPERM or EIO,
 * with buf "".
 */
int tl_proc_thread_comm(pid_t pid, pid_t ktid, char *buf, size_t cap);

/* The kernel's boot id (16 bytes). 0 or an errno. */
int tl_proc_boot_id(uint8_t out[16]);

/* Real, effective and saved uids and gids of pid. 0, ESRCH, EPERM (unreadable) or EIO. */
int tl_proc_creds_of(pid_t pid, tl_proc_creds *out);
/* 1 if this process has CAP_SYS_PTRACE in its effective set. */
int tl_proc_self_has_cap(int cap);

/*
 * The rule: a caller with CAP_SYS_PTRACE may trace anyone; otherwise its
 * effective uid must equal the target's real, effective and saved uids, and
 * its effective gid the target's three gids (the credential part of the
 * kernel's ptrace access check). 0 or EPERM.
 */
int tl_proc_creds_allow(const tl_proc_creds *target, uint32_t euid, uint32_t egid, int has_cap);

/* The whole decision for pid: 0, ESRCH (no such live process) or EPERM. */
int tl_proc_may_trace(pid_t pid);
/* The same, also giving the token and credentials it decided on (either may be NULL). */
int tl_proc_check_target(pid_t pid, tl_proc_token *token, tl_proc_creds *creds);

#endif
