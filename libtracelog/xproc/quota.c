/* The per-user stream table behind TRACE_SYS_MAX (see quota.h). */
#include "xproc/quota.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xproc/guard.h"
#include "xproc/proc.h"

#define OPEN_ATTEMPTS 4

void tl_quota_name(char out[TL_SHM_NAME_MAX], uint32_t euid)
{
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.streams", euid);
}

#define TL_QUOTA_ENV "TRACELOG_STREAMS_TABLE"
#define TAG_MAX 32

void tl_quota_name_from_env(char out[TL_SHM_NAME_MAX], uint32_t euid)
{
    const char *tag = getenv(TL_QUOTA_ENV);
    size_t n = tag ? strspn(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") : 0;
    if (n == 0 || n > TAG_MAX || tag[n] != '\0') {
        tl_quota_name(out, euid);
        return;
    }
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.streams.%s", euid, tag);
}

/* Read, not loaded through a mapping: another process of the user may have cut the table (shmobj.h). */
static int table_valid(int fd, uint32_t entries, uint32_t euid)
{
    uint32_t h[4];
    return pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h && h[0] == TL_QUOTA_MAGIC && h[1] == TL_QUOTA_VERSION &&
           h[2] == entries && h[3] == euid;
}

static int map_table(int fd, tl_quota_table **t)
{
    void *m = mmap(NULL, TL_QUOTA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return errno;
    *t = m;
    return 0;
}

/* Builds a table under a private name and links it in as `name`: EEXIST if someone was first. */
static int publish_new(const char *name, uint32_t entries, uint32_t euid)
{
    char tmp[TL_SHM_NAME_MAX];
    int fd;
    int e = tl_shmobj_create_staged(name, TL_QUOTA_SIZE, tmp, &fd);
    if (e)
        return e;
    /* Written, not stored through a mapping, as a staged name map is (shmobj.h). */
    uint32_t head[4] = {TL_QUOTA_MAGIC, TL_QUOTA_VERSION, entries, euid};
    _Static_assert(offsetof(tl_quota_table, magic) == 0 && offsetof(tl_quota_table, version) == 4 &&
                       offsetof(tl_quota_table, entries) == 8 && offsetof(tl_quota_table, euid) == 12,
                   "the header written is the table's");
    e = pwrite(fd, head, sizeof head, 0) == (ssize_t)sizeof head ? 0 : ENOMEM;
    return tl_shmobj_publish(tmp, name, fd, euid, (uint32_t)getegid(), e);
}

int tl_quota_open(const char *name, uint32_t entries, tl_quota *q)
{
    memset(q, 0, sizeof *q);
    if (entries == 0 || sizeof(tl_quota_table) + entries * sizeof(uint64_t) > TL_QUOTA_SIZE)
        return EINVAL;
    tl_proc_token self;
    int e = tl_proc_token_of(getpid(), &self);
    if (e)
        return e;
    uint32_t euid = (uint32_t)geteuid();
    for (int attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
        int fd;
        e = tl_shmobj_open(name, euid, TL_QUOTA_SIZE, &fd, NULL);
        if (e == ENOENT) {
            e = publish_new(name, entries, euid);
            if (e && e != EEXIST)
                return e;
            continue;
        }
        if (e == ENOTSUP || e == EACCES) { /* ours but wrong, or another user's */
            if (tl_shmobj_unlink(name) != 0)
                return ENOTSUP;
            continue;
        }
        if (e)
            return e;
        if (!table_valid(fd, entries, euid)) {
            /* Damaged, or another TRACE_SYS_MAX: entries held there are lost,
               which only ever lets more streams exist, never fewer. */
            close(fd);
            tl_shmobj_unlink(name);
            continue;
        }
        tl_quota_table *t = NULL;
        e = map_table(fd, &t);
        close(fd);
        if (e)
            return e;
        q->t = t;
        q->entries = entries;
        q->self = tl_proc_token_pack(&self);
        return 0;
    }
    return ENOTSUP;
}

void tl_quota_close(tl_quota *q)
{
    if (q->guarded)
        tl_guard_unregister(q->t);
    if (q->t)
        munmap(q->t, TL_QUOTA_SIZE);
    q->t = NULL;
    q->guarded = 0;
}

int tl_quota_guard(tl_quota *q)
{
    if (!q->t || q->guarded)
        return 0;
    int e = tl_guard_register(q->t, TL_QUOTA_SIZE);
    q->guarded = !e;
    return e;
}

int tl_quota_acquire(tl_quota *q, uint32_t *entry)
{
    for (uint32_t i = 0; i < q->entries; i++) {
        uint64_t free_holder = 0;
        if (atomic_compare_exchange_strong(&q->t->holder[i], &free_holder, q->self)) {
            *entry = i;
            return 0;
        }
    }
    for (uint32_t i = 0; i < q->entries; i++) {
        uint64_t h = atomic_load(&q->t->holder[i]);
        if (h != q->self && !tl_proc_packed_alive(h) && atomic_compare_exchange_strong(&q->t->holder[i], &h, q->self)) {
            *entry = i;
            return 0;
        }
    }
    return EAGAIN;
}

void tl_quota_release(tl_quota *q, uint32_t entry)
{
    if (entry >= q->entries)
        return;
    uint64_t mine = q->self;
    atomic_compare_exchange_strong(&q->t->holder[entry], &mine, 0);
}

void tl_quota_release_own(tl_quota *q)
{
    for (uint32_t i = 0; i < q->entries; i++)
        tl_quota_release(q, i);
}

uint32_t tl_quota_in_use(const tl_quota *q)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < q->entries; i++) {
        uint64_t h = atomic_load(&q->t->holder[i]);
        n += h && tl_proc_packed_alive(h);
    }
    return n;
}
