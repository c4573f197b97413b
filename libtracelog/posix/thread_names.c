/* Thread names by kernel tid, lock-free, readable from another process (thread_names.h). */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/text.h"
#include "posix/thread_names.h"

static tl_tname_table own;

tl_tname_table *tl_tname_own(void) { return &own; }

/* The index of ktid's probe-th slot: from our own ktid, never from the table. */
static uint32_t index_of(uint32_t ktid, uint32_t probe) { return (ktid * 2654435761u + probe) % TL_TNAME_SLOTS; }

/* Fills slot s, which the caller holds (its ktid has the busy bit), for thread (pid, ktid). */
static void fill(tl_tname_slot *s, uint32_t pid, uint32_t ktid, const char *name)
{
    __atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
    size_t n = strnlen(name, TL_TNAME_BYTES - 1);
    memcpy(s->name, name, n);
    memset(s->name + n, 0, TL_TNAME_BYTES - n);
    atomic_store_explicit(&s->ktid, ktid, memory_order_release);
}

/* 1 if thread ktid of process pid is known to be gone (tgkill's ESRCH); 0 if it lives, or nobody can tell. */
static int gone(uint32_t pid, uint32_t ktid)
{
    int saved = errno; /* the trace point's caller keeps its errno */
    int dead = pid && pid <= INT32_MAX && ktid <= INT32_MAX && syscall(SYS_tgkill, (pid_t)pid, (pid_t)ktid, 0) != 0 &&
               errno == ESRCH;
    errno = saved;
    return dead;
}

void tl_tname_put(tl_tname_table *t, uint32_t pid, uint32_t ktid, const char *name, int keep_existing)
{
    if (ktid == 0 || ktid & TL_TNAME_BUSY)
        return;
    for (uint32_t p = 0; p < TL_TNAME_PROBES; p++) {
        tl_tname_slot *s = &t->slot[index_of(ktid, p)];
        uint32_t k = atomic_load_explicit(&s->ktid, memory_order_relaxed);
        if (k == ktid && keep_existing)
            return;
        if ((k != 0 && k != ktid) || !atomic_compare_exchange_strong(&s->ktid, &k, ktid | TL_TNAME_BUSY))
            continue;
        fill(s, pid, ktid, name);
        return;
    }
    /*
     * No room within the probes: slots are never freed, so a process that
     * has made a few thousand threads in its life filled them, and every
     * later thread went unremembered (a thread that ended before its
     * events were drained was then logged without a name). The entry of
     * the probed thread gone longest gives way: the one whose kernel tid is
     * the furthest behind ours (tids are handed out in increasing order,
     * and wrap), in a full table most likely a thread that ended thousands
     * of threads ago, whose events a controller has drained since. A live
     * thread's entry stays (as does one nobody can tell is gone).
     */
    tl_tname_slot *oldest = NULL;
    uint32_t old_k = 0, age = 0;
    for (uint32_t p = 0; p < TL_TNAME_PROBES; p++) {
        tl_tname_slot *s = &t->slot[index_of(ktid, p)];
        uint32_t k = atomic_load_explicit(&s->ktid, memory_order_relaxed);
        if (k == 0 || k & TL_TNAME_BUSY || k == ktid || (uint32_t)(ktid - k) <= age ||
            !gone(__atomic_load_n(&s->pid, __ATOMIC_RELAXED), k))
            continue;
        oldest = s;
        old_k = k;
        age = (uint32_t)(ktid - k);
    }
    if (oldest && atomic_compare_exchange_strong(&oldest->ktid, &old_k, ktid | TL_TNAME_BUSY))
        fill(oldest, pid, ktid, name);
}

int tl_tname_get(const tl_tname_table *t, uint32_t pid, uint32_t ktid, char *out, size_t cap)
{
    if (!cap)
        return ENOENT;
    out[0] = 0;
    if (ktid == 0 || ktid & TL_TNAME_BUSY)
        return ENOENT;
    for (uint32_t p = 0; p < TL_TNAME_PROBES; p++) {
        const tl_tname_slot *s = &t->slot[index_of(ktid, p)];
        if (atomic_load_explicit(&s->ktid, memory_order_acquire) != ktid ||
            __atomic_load_n(&s->pid, __ATOMIC_RELAXED) != pid)
            continue;
        char name[TL_TNAME_BYTES];
        memcpy(name, s->name, sizeof name); /* a copy: the other side may rewrite the slot meanwhile */
        if (atomic_load_explicit(&s->ktid, memory_order_acquire) != ktid)
            return ENOENT; /* rewritten for another thread meanwhile */
        size_t len = strnlen(name, sizeof name);
        if (len == 0 || len == sizeof name)
            return EILSEQ;
        tl_copy_text_cut(out, cap, name, len);
        return 0;
    }
    return ENOENT;
}

void tl_tname_copy(tl_tname_table *dst, const tl_tname_table *src, uint32_t pid)
{
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i++) {
        const tl_tname_slot *s = &src->slot[i];
        uint32_t k = atomic_load_explicit(&s->ktid, memory_order_acquire);
        uint32_t owner = __atomic_load_n(&s->pid, __ATOMIC_RELAXED);
        if (k == 0 || k & TL_TNAME_BUSY || (pid && owner != pid))
            continue;
        char name[TL_TNAME_BYTES];
        memcpy(name, s->name, sizeof name);
        size_t len = strnlen(name, sizeof name);
        if (len && len < sizeof name) /* a bad entry stays behind: the reader of dst would refuse it */
            tl_tname_put(dst, owner, k, name, 1);
    }
}
