/*
 * The table of thread names by kernel tid (libtracelog/posix/thread_names.h)
 * that a traced process publishes in its name map, where its controller and
 * the parent of an inherited stream read it (issue 26): lookups, a reused
 * tid, a full probe sequence, and the entries another process may write
 * there (no NUL, empty, caught busy, a wrong pid, random bytes), which are
 * refused without reading past a slot. Then end to end: a forked child
 * recording into its parent's inherited stream spoils its own thread's
 * entry in the shared map; the parent's log leaves that thread unnamed and
 * counts it (tracelog_trace_stats.names_refused), and names the child's
 * other thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "posix/thread_names.h"
#include "posix_helpers.h"

static tl_tname_table table;

static int get(uint32_t pid, uint32_t ktid, char *out, size_t cap) { return tl_tname_get(&table, pid, ktid, out, cap); }

/* The slot (pid, ktid) occupies, or NULL. */
static tl_tname_slot *slot_of(uint32_t pid, uint32_t ktid)
{
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i++)
        if (atomic_load(&table.slot[i].ktid) == ktid && table.slot[i].pid == pid)
            return &table.slot[i];
    return NULL;
}

static void test_lookups(void)
{
    char out[64];
    memset(&table, 0, sizeof table);
    tl_tname_put(&table, 10, 100, "main", 0);
    tl_tname_put(&table, 10, 101, "worker-1", 0);
    tl_tname_put(&table, 11, 200, "a-name-of-15-ch", 0); /* the longest a comm holds */
    CHECK_EQ_INT(get(10, 100, out, sizeof out), 0);
    CHECK_STR_EQ(out, "main");
    CHECK_EQ_INT(get(10, 101, out, sizeof out), 0);
    CHECK_STR_EQ(out, "worker-1");
    CHECK_EQ_INT(get(11, 200, out, sizeof out), 0);
    CHECK_STR_EQ(out, "a-name-of-15-ch");
    CHECK_EQ_INT(get(11, 100, out, sizeof out), ENOENT); /* another process's tid */
    CHECK_EQ_INT(get(10, 102, out, sizeof out), ENOENT);
    CHECK_STR_EQ(out, "");
    CHECK_EQ_INT(get(10, 0, out, sizeof out), ENOENT);
    /* A name longer than 15 bytes is cut as the kernel cuts a comm. */
    tl_tname_put(&table, 10, 103, "0123456789abcdefXYZ", 0);
    CHECK_EQ_INT(get(10, 103, out, sizeof out), 0);
    CHECK_STR_EQ(out, "0123456789abcde");
    /* Cut to the caller's room, before a UTF-8 continuation byte. */
    tl_tname_put(&table, 10, 104, "ab\xc3\xa9", 0); /* "abé" */
    CHECK_EQ_INT(get(10, 104, out, 4), 0);
    CHECK_STR_EQ(out, "ab");
    /* A tid reused by a new thread: its name replaces the old one's, unless the caller keeps existing ones. */
    tl_tname_put(&table, 12, 100, "reuser", 1);
    CHECK_EQ_INT(get(10, 100, out, sizeof out), 0);
    CHECK_STR_EQ(out, "main");
    tl_tname_put(&table, 12, 100, "reuser", 0);
    CHECK_EQ_INT(get(12, 100, out, sizeof out), 0);
    CHECK_STR_EQ(out, "reuser");
    CHECK_EQ_INT(get(10, 100, out, sizeof out), ENOENT);
    /* Copy: the entries of one process (or all), never over those the target has. */
    tl_tname_table *copy = calloc(1, sizeof *copy);
    if (!CHECK(copy != NULL))
        return;
    tl_tname_put(copy, 10, 101, "kept", 0);
    tl_tname_copy(copy, &table, 10);
    CHECK_EQ_INT(tl_tname_get(copy, 10, 101, out, sizeof out), 0);
    CHECK_STR_EQ(out, "kept");
    CHECK_EQ_INT(tl_tname_get(copy, 10, 103, out, sizeof out), 0);
    CHECK_EQ_INT(tl_tname_get(copy, 11, 200, out, sizeof out), ENOENT);
    tl_tname_copy(copy, &table, 0);
    CHECK_EQ_INT(tl_tname_get(copy, 11, 200, out, sizeof out), 0);
    free(copy);
}

/* n tids from `from` on whose probe sequences start at the same slot as `like`'s. */
static uint32_t same_start(uint32_t like, uint32_t from, uint32_t *tids, uint32_t n)
{
    uint32_t want = (like * 2654435761u) % TL_TNAME_SLOTS, got = 0;
    for (uint32_t k = from; got < n && k < 50000000u; k++)
        if ((k * 2654435761u) % TL_TNAME_SLOTS == want)
            tids[got++] = k;
    return got;
}

/*
 * Tids whose probe sequences start at the same slot: the 9th finds no free
 * slot. Entries of threads nobody can tell are gone (no pid) stay, and it is
 * not remembered; of gone threads (of a pid past any pid_max), the one
 * furthest behind it gives way (a process that had made thousands of threads
 * remembered none of its later ones: their names were lost when they ended
 * before a drain); a live thread's entry stays, however old.
 */
#define GONE (1u << 30) /* a pid past any pid_max (at most 2^22): its threads are gone */

static void test_full_probes(void)
{
    char out[16];
    memset(&table, 0, sizeof table);
    uint32_t tids[TL_TNAME_PROBES + 1];
    if (!CHECK_EQ_INT(same_start(1, 1, tids, TL_TNAME_PROBES + 1), TL_TNAME_PROBES + 1))
        return;
    for (uint32_t i = 0; i <= TL_TNAME_PROBES; i++)
        tl_tname_put(&table, 0, tids[i], "t", 0);
    for (uint32_t i = 0; i < TL_TNAME_PROBES; i++)
        CHECK_EQ_INT(get(0, tids[i], out, sizeof out), 0);
    CHECK_EQ_INT(get(0, tids[TL_TNAME_PROBES], out, sizeof out), ENOENT);

    memset(&table, 0, sizeof table);
    for (uint32_t i = 0; i < TL_TNAME_PROBES; i++) /* in any order */
        tl_tname_put(&table, GONE, tids[i * 3 % TL_TNAME_PROBES], "t", 0);
    tl_tname_put(&table, GONE, tids[TL_TNAME_PROBES], "t", 0);
    CHECK_EQ_INT(get(GONE, tids[TL_TNAME_PROBES], out, sizeof out), 0);
    CHECK_EQ_INT(get(GONE, tids[0], out, sizeof out), ENOENT); /* the furthest behind */
    for (uint32_t i = 1; i <= TL_TNAME_PROBES; i++)
        CHECK_EQ_INT(get(GONE, tids[i], out, sizeof out), 0);

    /* Our own live thread, the oldest of its probes: a gone one gives way instead. */
    memset(&table, 0, sizeof table);
    uint32_t me = (uint32_t)syscall(SYS_gettid), pid = (uint32_t)getpid();
    if (!CHECK_EQ_INT(same_start(me, me + 1, tids, TL_TNAME_PROBES), TL_TNAME_PROBES))
        return;
    tl_tname_put(&table, pid, me, "me", 0);
    for (uint32_t i = 0; i < TL_TNAME_PROBES; i++)
        tl_tname_put(&table, GONE, tids[i], "t", 0);
    CHECK_EQ_INT(get(pid, me, out, sizeof out), 0);
    CHECK_STR_EQ(out, "me");
    CHECK_EQ_INT(get(GONE, tids[0], out, sizeof out), ENOENT);
    CHECK_EQ_INT(get(GONE, tids[TL_TNAME_PROBES - 1], out, sizeof out), 0);
}

/* What another process may leave in a slot. */
static void test_hostile_entries(void)
{
    char out[64];
    memset(&table, 0, sizeof table);
    tl_tname_put(&table, 7, 700, "no-nul", 0);
    tl_tname_put(&table, 7, 701, "empty", 0);
    tl_tname_put(&table, 7, 702, "busy", 0);
    tl_tname_slot *s = slot_of(7, 700);
    if (!CHECK(s != NULL))
        return;
    memset(s->name, 'x', sizeof s->name); /* 16 bytes, no NUL */
    CHECK_EQ_INT(get(7, 700, out, sizeof out), EILSEQ);
    CHECK_STR_EQ(out, "");
    s = slot_of(7, 701);
    memset(s->name, 0, sizeof s->name);
    CHECK_EQ_INT(get(7, 701, out, sizeof out), EILSEQ);
    s = slot_of(7, 702);
    atomic_store(&s->ktid, 702 | TL_TNAME_BUSY); /* left busy for ever: not read, and a put gives up */
    CHECK_EQ_INT(get(7, 702, out, sizeof out), ENOENT);
    /* Random bytes over the whole table: every lookup ends with one of the three answers, a taken name NUL-terminated and short. */
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof table; i++) {
        seed = seed * 1103515245u + 12345u;
        ((unsigned char *)&table)[i] = (unsigned char)(seed >> 16);
    }
    /* Half the slots claim a tid whose probes start there (random pid and name): lookups that reach them. */
    uint32_t inverse = 1;
    for (int i = 0; i < 12; i++) /* Newton's iteration: the inverse of the odd hash multiplier mod 2^12 */
        inverse *= 2 - 2654435761u * inverse;
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i += 2)
        atomic_store(&table.slot[i].ktid, ((i * inverse) % TL_TNAME_SLOTS) | 4096u * (1 + i % 7));
    int found = 0, refused = 0, odd = 0;
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i++) { /* the tids and pids the slots claim, and some that are not there */
        uint32_t k = atomic_load(&table.slot[i].ktid), pid = table.slot[i].pid;
        uint32_t tries[2][2] = {{pid, k}, {pid, i + 1}};
        for (int t = 0; t < 2; t++) {
            memset(out, '#', sizeof out);
            int e = get(tries[t][0], tries[t][1], out, 8);
            found += e == 0;
            refused += e == EILSEQ;
            odd += !(e == 0 || e == EILSEQ || e == ENOENT) || strnlen(out, 8) == 8 || (e == 0 && !out[0]);
        }
    }
    CHECK_EQ_INT(odd, 0);
    CHECK_MSG(found > 0 && refused > 0, "random slots: %d names taken, %d refused", found, refused);
}

/* ---- end to end: a child's spoiled entry in its parent's shared map ---- */

static void *child_thread(void *arg)
{
    const char **a = arg;
    pthread_setname_np(pthread_self(), a[0]);
    trace_event_id_t id;
    posix_trace_eventid_open(a[1], &id);
    for (int i = 0; i < 10; i++)
        posix_trace_event(id, &i, sizeof i);
    return (void *)(uintptr_t)gettid();
}

/* In the child: its thread's slot in the map it shares with its parent, found in its mappings. */
static tl_tname_slot *shared_slot(uint32_t pid, uint32_t ktid, const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    tl_tname_slot *found = NULL;
    while (f && !found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, ".names.") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        for (unsigned long at = lo; at + sizeof(tl_tname_slot) <= hi && !found; at += 4) {
            tl_tname_slot *s = (tl_tname_slot *)at;
            if (atomic_load(&s->ktid) == ktid && s->pid == pid && strcmp(s->name, name) == 0)
                found = s;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static int child_main(void)
{
    const char *bad[2] = {"spoiled", "tn.bad"}, *good[2] = {"kept-name", "tn.good"};
    pthread_t t;
    void *ktid;
    pthread_create(&t, NULL, child_thread, bad);
    pthread_join(t, &ktid);
    tl_tname_slot *s = shared_slot((uint32_t)getpid(), (uint32_t)(uintptr_t)ktid, "spoiled");
    if (!s)
        return 3;
    memset(s->name, '!', sizeof s->name); /* no NUL left */
    pthread_create(&t, NULL, child_thread, good);
    pthread_join(t, NULL);
    return 0;
}

/* Each tn.* event's thread name in the log at path: "name,name,..." per event type, in order. */
static void names_in_log(const char *path, const char *type, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY);
    tracelog_reader *r;
    out[0] = 0;
    if (!CHECK(fd >= 0) || !CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK))
        return;
    tracelog_event ev;
    const char *last = "?";
    int n = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        const char *tn = tracelog_reader_event_name(r, ev.event_id);
        if (!tn || strcmp(tn, type) != 0)
            continue;
        const char *name = tracelog_reader_event_thread_name(r, &ev);
        last = name ? name : "(none)";
        n++;
    }
    snprintf(out, cap, "%d %s", n, last);
    tracelog_reader_close(r);
    close(fd);
}

static void test_spoiled_entry_counted(void)
{
    char path[] = "/tmp/tl_tnames_table_XXXXXX";
    int fd = mkstemp(path);
    if (!CHECK(fd >= 0))
        return;
    trace_attr_t attr;
    trace_id_t trid;
    trace_event_id_t id;
    posix_trace_eventid_open("tn.parent", &id); /* the map is named before the fork (the controller's object made) */
    pt_attr(&attr, POSIX_TRACE_LOOP, 1u << 20, 64);
    posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED);
    if (!CHECK_ERR(posix_trace_create_withlog(0, &attr, fd, &trid), 0) || !CHECK_ERR(posix_trace_start(trid), 0))
        return;
    pid_t pid = pt_fork(30);
    if (pid == 0)
        _exit(child_main());
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x (3: its slot not found)", (unsigned)status);
    CHECK_ERR(posix_trace_flush(trid), 0); /* the child is gone: /proc names none of its threads */
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(trid, &st), 0);
    CHECK_EQ_INT((int)st.names_refused, 1);
    CHECK_ERR(posix_trace_shutdown(trid), 0);
    close(fd);
    char got[64];
    names_in_log(path, "tn.bad", got, sizeof got);
    CHECK_STR_EQ(got, "10 (none)");
    names_in_log(path, "tn.good", got, sizeof got);
    CHECK_STR_EQ(got, "10 kept-name");
    unlink(path);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_lookups);
    PT_RUN(test_full_probes);
    PT_RUN(test_hostile_entries);
    PT_RUN(test_spoiled_entry_counted);
    return pt_finish();
}
