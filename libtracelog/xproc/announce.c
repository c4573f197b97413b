/*
 * Announcements over the control object's slots (design note, section 4).
 * A controller writes a slot under a sequence lock (odd generation while it
 * writes) and only then sets TL_CTL_PENDING in the event word; the traced
 * process clears TL_CTL_PENDING before it reads the slots. So a request is
 * never lost and the traced process never has to come back for a slot it
 * caught mid-write: the writer sets TL_CTL_PENDING again when it is done.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xproc/ctl.h"

#define ACK_POLL_NS 100000             /* a waiting controller looks this often */
#define ACK_ALIVE_CHECK_EVERY 64       /* and checks the process is alive this often */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- controller ---------------------------------------------------------- */

/* A dead controller's slot: its stream's name, if it is one of this process's, goes with it. */
static void forget_stale(tl_ctl_peer *p, tl_ctl_slot *s)
{
    char name[TL_SHM_NAME_MAX];
    memcpy(name, s->name, sizeof name); /* a copy: the traced process may write the slot */
    name[sizeof name - 1] = '\0';
    if (tl_ctl_stream_name_valid(name, p->euid, p->token.pid))
        tl_shmobj_unlink(name);
}

/* A free slot, else one whose controller died. Its index, or -1. */
static int claim(tl_ctl_peer *p)
{
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        uint64_t free_owner = 0;
        if (atomic_compare_exchange_strong(&p->ctl->slots[i].owner, &free_owner, p->self))
            return (int)i;
    }
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        tl_ctl_slot *s = &p->ctl->slots[i];
        uint64_t o = atomic_load(&s->owner);
        if (o == p->self || tl_proc_packed_alive(o) || !atomic_compare_exchange_strong(&s->owner, &o, p->self))
            continue;
        forget_stale(p, s);
        return (int)i;
    }
    return -1;
}

int tl_ctl_announce(tl_ctl_peer *p, const tl_announce *a, int *slot, uint64_t *gen)
{
    if (!tl_proc_alive(&p->token))
        return ESRCH;
    int i = *slot;
    if (i < 0 || i >= (int)TL_CTL_SLOTS || atomic_load(&p->ctl->slots[i].owner) != p->self)
        i = claim(p);
    if (i < 0)
        return EAGAIN;
    tl_ctl_slot *s = &p->ctl->slots[i];
    uint64_t g = atomic_load(&s->gen);
    g += g & 1; /* a controller that died mid-write left it odd */
    atomic_store_explicit(&s->gen, g + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* odd before any field */
    s->op = a->op;
    s->flags = a->flags;
    s->size = a->size;
    s->id = a->id;
    memset(s->name, 0, sizeof s->name);
    memcpy(s->name, a->name, strnlen(a->name, sizeof s->name - 1));
    atomic_store_explicit(&s->gen, g + 2, memory_order_release);
    atomic_fetch_or(&p->ctl->word, TL_CTL_PENDING);
    *slot = i;
    *gen = g + 2;
    return 0;
}

void tl_ctl_release(tl_ctl_peer *p, int slot)
{
    if (slot < 0 || slot >= (int)TL_CTL_SLOTS)
        return;
    uint64_t mine = p->self;
    atomic_compare_exchange_strong(&p->ctl->slots[slot].owner, &mine, 0);
}

int tl_ctl_wait_ack(tl_ctl_peer *p, int slot, uint64_t gen, uint64_t timeout_ns, int *result)
{
    if (slot < 0 || slot >= (int)TL_CTL_SLOTS)
        return EINVAL;
    tl_ctl_slot *s = &p->ctl->slots[slot];
    uint64_t deadline = now_ns() + timeout_ns;
    for (unsigned n = 1;; n++) {
        /* Generations only grow, and only we write this slot while we own it. */
        if (atomic_load_explicit(&s->acked, memory_order_acquire) >= gen) {
            *result = atomic_load(&s->result);
            return 0;
        }
        if (now_ns() >= deadline)
            return ETIMEDOUT;
        if (n % ACK_ALIVE_CHECK_EVERY == 0 && !tl_proc_alive(&p->token))
            return ESRCH;
        struct timespec pause = {0, ACK_POLL_NS};
        nanosleep(&pause, NULL);
    }
}

/* ---- traced process ---------------------------------------------------- */

static int announcement_valid(const tl_announce *a)
{
    if (a->op == TL_CTL_DETACH)
        return 1;
    return a->op == TL_CTL_ATTACH && (a->flags & ~TL_CTL_FLAG_INHERITED) == 0 && a->size > 0 &&
           a->size <= TL_CTL_MAX_STREAM && tl_ctl_stream_name_valid(a->name, (uint32_t)geteuid(), (uint32_t)getpid());
}

/* Copies slot s out under its sequence lock. 1 with *a and *g, 0 if caught mid-write. */
static int read_slot(tl_ctl_slot *s, tl_announce *a, uint64_t *g)
{
    uint64_t g1 = atomic_load_explicit(&s->gen, memory_order_acquire);
    if (g1 & 1)
        return 0;
    a->op = s->op;
    a->flags = s->flags;
    a->size = s->size;
    a->id = s->id;
    memcpy(a->name, s->name, sizeof a->name);
    atomic_thread_fence(memory_order_acquire); /* the copy before the second read */
    if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g1)
        return 0;
    a->name[sizeof a->name - 1] = '\0';
    *g = g1;
    return 1;
}

unsigned tl_ctl_poll(tl_ctl *c, uint64_t seen[TL_CTL_SLOTS], tl_ctl_handler h, void *ctx)
{
    atomic_fetch_and(&c->word, ~TL_CTL_PENDING);
    unsigned handled = 0;
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        tl_ctl_slot *s = &c->slots[i];
        if (atomic_load_explicit(&s->gen, memory_order_relaxed) == seen[i])
            continue;
        tl_announce a;
        uint64_t g;
        if (!read_slot(s, &a, &g))
            continue; /* its writer sets TL_CTL_PENDING again when done */
        int r = announcement_valid(&a) ? h(ctx, i, &a) : EINVAL;
        atomic_store(&s->result, r);
        atomic_store_explicit(&s->acked, g, memory_order_release);
        seen[i] = g;
        handled++;
    }
    return handled;
}
