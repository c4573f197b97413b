/*
 * fuzz_ctl_slots: any bytes as a control object's page, as a traced process
 * finds it (libtracelog/xproc/announce.c; design note, section 4): the
 * announcement slots are written by controllers, which the traced process
 * does not trust. A slot name starting "/tracelog.E.P." is rewritten to this
 * process's euid and pid first, so that inputs can hold names it accepts.
 *
 * Properties:
 *  - tl_ctl_poll never crashes or reads outside the page;
 *  - the handler only ever sees an announcement that passed validation: op
 *    ATTACH or DETACH; for ATTACH known flags only, a size in (0,
 *    TL_CTL_MAX_STREAM], a NUL-terminated name that is a stream name of this
 *    process;
 *  - every slot with an even generation not yet seen is acknowledged with
 *    that generation, with the handler's answer or EINVAL; a slot caught
 *    mid-write (odd generation) is left alone; TL_CTL_PENDING is cleared;
 *  - a second poll with nothing new handles nothing.
 */
#define _GNU_SOURCE
#include "fuzz_helpers.h"
#include "xproc/ctl.h"

static unsigned calls;

static int handler(void *ctx, unsigned slot, const tl_announce *a)
{
    (void)ctx;
    calls++;
    FUZZ_ASSERT(slot < TL_CTL_SLOTS);
    FUZZ_ASSERT(a->op == TL_CTL_ATTACH || a->op == TL_CTL_DETACH, "op %u", a->op);
    if (a->op == TL_CTL_ATTACH) {
        FUZZ_ASSERT((a->flags & ~TL_CTL_FLAG_INHERITED) == 0);
        FUZZ_ASSERT(a->size > 0 && a->size <= TL_CTL_MAX_STREAM);
        FUZZ_ASSERT(memchr(a->name, 0, sizeof a->name) != NULL);
        FUZZ_ASSERT(tl_ctl_stream_name_valid(a->name, (uint32_t)geteuid(), (uint32_t)getpid()));
    }
    return a->id & 1 ? ENOENT : 0;
}

/* "/tracelog.E.P.rest" -> "/tracelog.<euid>.<pid>.rest" (cut to the field). */
static void localize(char name[TL_SHM_NAME_MAX])
{
    static const char tmpl[] = "/tracelog.E.P.";
    if (strncmp(name, tmpl, sizeof tmpl - 1) != 0)
        return;
    char out[2 * TL_SHM_NAME_MAX];
    int n = snprintf(out, sizeof out, "/tracelog.%u.%u.%.*s", (unsigned)geteuid(), (unsigned)getpid(),
                     (int)(TL_SHM_NAME_MAX - sizeof tmpl), name + sizeof tmpl - 1);
    if (n < 0)
        return;
    memcpy(name, out, TL_SHM_NAME_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tl_ctl page __attribute__((aligned(64)));
    union {
        tl_ctl c;
        unsigned char bytes[sizeof(tl_ctl)];
    } *u = (void *)&page;
    memset(u->bytes, 0, sizeof u->bytes);
    memcpy(u->bytes, data, size < sizeof u->bytes ? size : sizeof u->bytes);
    tl_ctl *c = &u->c;
    uint64_t gen[TL_CTL_SLOTS], acked[TL_CTL_SLOTS];
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        localize(c->slots[i].name);
        gen[i] = atomic_load(&c->slots[i].gen);
        acked[i] = atomic_load(&c->slots[i].acked);
    }
    uint64_t seen[TL_CTL_SLOTS] = {0};
    calls = 0;
    unsigned handled = tl_ctl_poll(c, seen, handler, NULL);
    FUZZ_ASSERT(!(atomic_load(&c->word) & TL_CTL_PENDING));
    FUZZ_ASSERT(calls <= handled && handled <= TL_CTL_SLOTS);
    unsigned expected = 0;
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        tl_ctl_slot *s = &c->slots[i];
        if (gen[i])
            FUZZ_DEEP(); /* a slot announced, or being announced */
        if (gen[i] == 0 || (gen[i] & 1)) { /* never announced, or mid-write: untouched */
            FUZZ_ASSERT(atomic_load(&s->acked) == acked[i] && seen[i] == 0, "slot %u", i);
            continue;
        }
        expected++;
        FUZZ_ASSERT(atomic_load(&s->acked) == gen[i] && seen[i] == gen[i], "slot %u not acknowledged", i);
        int r = atomic_load(&s->result);
        FUZZ_ASSERT(r == 0 || r == ENOENT || r == EINVAL, "slot %u result %d", i, r);
    }
    FUZZ_ASSERT(handled == expected, "%u handled, %u expected", handled, expected);
    calls = 0;
    FUZZ_ASSERT(tl_ctl_poll(c, seen, handler, NULL) == 0 && calls == 0, "a second poll found work");
    return 0;
}
