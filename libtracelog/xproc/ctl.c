/*
 * The control object's life: made (or adopted, or put in place of a stale
 * one) by the traced process, opened and validated by a controller. The
 * announcement protocol over its slots is in announce.c.
 */
#include "xproc/ctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xproc/guard.h"

#define CREATE_ATTEMPTS 4 /* each attempt removes one stale object or loses one race */
#define MADE_WAIT_STEPS 200 /* x 100 us: how long a half-made object is waited for */

void tl_ctl_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid)
{
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.%u", euid, pid);
}

uint64_t tl_ctl_names_nonce(tl_ctl *c)
{
    uint64_t have = atomic_load(&c->names_nonce), mine = 0;
    if (have)
        return have;
    while (!mine)
        if (getrandom(&mine, sizeof mine, 0) != sizeof mine)
            return 0;
    return atomic_compare_exchange_strong(&c->names_nonce, &have, mine) ? mine : have;
}

void tl_ctl_stream_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid, uint64_t nonce)
{
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.%u.%016llx", euid, pid, (unsigned long long)nonce);
}

static int all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return n > 0;
}

/* Decimal digits of v at p (no snprintf: this runs in posix_trace_event's slow path). Their count. */
static size_t put_u32(char *p, uint32_t v)
{
    char rev[10];
    size_t n = 0;
    do
        rev[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    for (size_t i = 0; i < n; i++)
        p[i] = rev[n - 1 - i];
    return n;
}

int tl_ctl_stream_name_valid(const char *name, uint32_t euid, uint32_t pid)
{
    static const char base[] = "/tracelog.";
    char prefix[TL_SHM_NAME_MAX];
    memcpy(prefix, base, sizeof base - 1);
    size_t plen = sizeof base - 1;
    plen += put_u32(prefix + plen, euid);
    prefix[plen++] = '.';
    size_t len = strnlen(name, TL_SHM_NAME_MAX);
    if (len >= TL_SHM_NAME_MAX || len < plen + 18 || memcmp(name, prefix, plen) != 0)
        return 0;
    const char *p = name + plen, *hex = name + len - 16;
    if (hex[-1] != '.' || !all_of(p, (size_t)(hex - 1 - p), "0123456789") || !all_of(hex, 16, "0123456789abcdef"))
        return 0;
    if (pid == 0)
        return 1;
    char want[10];
    size_t n = put_u32(want, pid);
    return n == (size_t)(hex - 1 - p) && memcmp(p, want, n) == 0;
}

/* Does the header say it belongs to the process `t` of this boot and user? */
static int header_matches(const tl_ctl *c, const tl_proc_token *t, const uint8_t boot[16], uint32_t euid)
{
    return atomic_load_explicit(&((tl_ctl *)c)->magic, memory_order_acquire) == TL_CTL_MAGIC &&
           c->version == TL_CTL_VERSION && c->nslots == TL_CTL_SLOTS && c->size == TL_CTL_SIZE &&
           c->pid == t->pid && c->start == t->start && memcmp(c->boot_id, boot, 16) == 0 && c->euid == euid;
}

static void init_header(tl_ctl *c, const tl_proc_token *t, const uint8_t boot[16], uint32_t euid)
{
    c->version = TL_CTL_VERSION;
    c->nslots = TL_CTL_SLOTS;
    c->size = TL_CTL_SIZE;
    c->pid = t->pid;
    c->start = t->start;
    memcpy(c->boot_id, boot, 16);
    c->euid = euid;
    atomic_store_explicit(&c->magic, TL_CTL_MAGIC, memory_order_release);
}

/*
 * An object someone is making right now (a controller making it for its
 * child, or the other way round) has no magic yet: give its maker a moment.
 */
static void wait_made(const tl_ctl *c)
{
    for (int i = 0; i < MADE_WAIT_STEPS && atomic_load_explicit(&((tl_ctl *)c)->magic, memory_order_acquire) == 0; i++) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
}

/* An adopted object may hold announcements for the image before exec: look at them. */
static uint64_t pending_if_announced(const tl_ctl *c)
{
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++)
        if (atomic_load(&((tl_ctl *)c)->slots[i].gen))
            return TL_CTL_PENDING;
    return 0;
}

/* Opens name for creation: 0 with *fd and *fresh, or an errno; EAGAIN asks for another attempt. */
static int open_own(const char *name, uint32_t euid, int *fd, int *fresh)
{
    int e = tl_shmobj_create(name, TL_CTL_SIZE, euid, (uint32_t)getegid(), fd);
    *fresh = e == 0;
    if (e != EEXIST)
        return e;
    e = tl_shmobj_open(name, euid, TL_CTL_SIZE, fd, NULL);
    if (e == ENOENT)
        return EAGAIN; /* removed meanwhile */
    if (e == ENOTSUP || e == EACCES) /* ours but damaged, or squatted by another user */
        return tl_shmobj_unlink(name) == 0 ? EAGAIN : EEXIST;
    return e;
}

static int map_over(void *at, int fd, tl_ctl **c)
{
    void *m = mmap(at, TL_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (m == MAP_FAILED)
        return errno;
    *c = m;
    return 0;
}

int tl_ctl_create(void *at, uint64_t word, tl_ctl **out)
{
    tl_proc_token self;
    uint8_t boot[16];
    int e = tl_proc_token_of(getpid(), &self);
    if (!e)
        e = tl_proc_boot_id(boot);
    if (e)
        return e;
    uint32_t euid = (uint32_t)geteuid();
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, euid, self.pid);
    for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
        int fd, fresh;
        e = open_own(name, euid, &fd, &fresh);
        if (e == EAGAIN)
            continue;
        if (e)
            return e;
        tl_ctl *c = mmap(NULL, TL_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c == MAP_FAILED) {
            e = errno;
            close(fd);
            return e;
        }
        if (!fresh)
            wait_made(c);
        if (!fresh && !header_matches(c, &self, boot, euid)) {
            munmap(c, TL_CTL_SIZE); /* a dead process's, with our pid: replace it */
            close(fd);
            tl_shmobj_unlink(name);
            continue;
        }
        atomic_store(&c->word, word | (fresh ? 0 : pending_if_announced(c)));
        if (fresh)
            init_header(c, &self, boot, euid);
        if (at) {
            tl_ctl *fixed = NULL;
            e = map_over(at, fd, &fixed);
            munmap(c, TL_CTL_SIZE);
            c = e ? NULL : fixed;
        }
        close(fd);
        if (e) {
            if (fresh)
                tl_shmobj_unlink(name);
            return e;
        }
        *out = c;
        return 0;
    }
    return EEXIST;
}

void tl_ctl_unlink_own(const tl_ctl *c)
{
    tl_proc_token self;
    uint8_t boot[16];
    if (!c || tl_proc_token_of(getpid(), &self) || tl_proc_boot_id(boot) ||
        !header_matches(c, &self, boot, (uint32_t)geteuid()))
        return; /* a forked child's inherited view, or not ours any more */
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, c->euid, c->pid);
    tl_shmobj_unlink(name);
}

int tl_ctl_privatize(void *at)
{
    uint64_t word = atomic_load(&((tl_ctl *)at)->word) & ~TL_CTL_PENDING;
    void *m = mmap(at, TL_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (m == MAP_FAILED)
        return errno;
    atomic_store(&((tl_ctl *)m)->word, word);
    return 0;
}

/* ---- controller ---------------------------------------------------------- */

/*
 * The controller's mapping of the object fd opens (then closed), in p->ctl: 0 or an errno. The
 * process can truncate its object under us: an access past the end then finds zeros (guard.h).
 */
static int map_for_peer(tl_ctl_peer *p, int fd)
{
    void *m = mmap(NULL, TL_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = m == MAP_FAILED ? errno : 0;
    close(fd);
    if (e)
        return e;
    e = tl_guard_register(m, TL_CTL_SIZE);
    if (e) {
        munmap(m, TL_CTL_SIZE);
        return e;
    }
    p->ctl = m;
    return 0;
}

static int map_peer(tl_ctl_peer *p, const char *name)
{
    int fd;
    int e = tl_shmobj_open(name, p->euid, TL_CTL_SIZE, &fd, NULL);
    if (e == ENOENT || e == ENOTSUP || e == EINVAL)
        return ENOTSUP; /* no libtracelog there, or not a control object */
    if (e)
        return e == EACCES ? EPERM : e;
    e = map_for_peer(p, fd);
    return !e || e == ENOMEM || e == EAGAIN ? e : ENOTSUP;
}

int tl_ctl_open(pid_t pid, tl_ctl_peer *p)
{
    memset(p, 0, sizeof *p);
    tl_proc_creds creds;
    int e = tl_proc_check_target(pid, &p->token, &creds);
    if (e)
        return e;
    tl_proc_token self;
    uint8_t boot[16];
    e = tl_proc_token_of(getpid(), &self);
    if (!e)
        e = tl_proc_boot_id(boot);
    if (e)
        return EIO;
    p->euid = creds.uid[1];
    p->egid = creds.gid[1];
    p->self = tl_proc_token_pack(&self);
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, p->euid, p->token.pid);
    e = map_peer(p, name);
    if (e)
        return e;
    wait_made(p->ctl);
    if (!header_matches(p->ctl, &p->token, boot, p->euid)) {
        /* Not made by this process: a dead one's with the same pid, or damaged.
           It is left where it is: the process replaces it when it makes its
           own, and removing it from here could race with that replacement. */
        tl_ctl_close(p);
        return ENOTSUP;
    }
    if (!tl_proc_alive(&p->token)) { /* died between our checks */
        tl_ctl_close(p);
        return ESRCH;
    }
    return 0;
}

void tl_ctl_close(tl_ctl_peer *p)
{
    if (p->ctl) {
        tl_guard_unregister(p->ctl);
        munmap(p->ctl, TL_CTL_SIZE);
    }
    p->ctl = NULL;
}

/* Makes the object of the process p names, as that process would have made it. */
static int make_for(tl_ctl_peer *p, const char *name)
{
    uint8_t boot[16];
    int e = tl_proc_boot_id(boot);
    if (e)
        return EIO;
    int fd;
    e = tl_shmobj_create(name, TL_CTL_SIZE, p->euid, p->egid, &fd);
    if (e)
        return e;
    e = map_for_peer(p, fd); /* the child's once it runs its program */
    if (e) {
        tl_shmobj_unlink(name);
        return e == EAGAIN ? EAGAIN : ENOMEM;
    }
    init_header(p->ctl, &p->token, boot, p->euid);
    return 0;
}

int tl_ctl_open_or_make(pid_t pid, tl_ctl_peer *p)
{
    int e = tl_ctl_open(pid, p);
    pid_t parent;
    if (e != ENOTSUP || tl_proc_parent_of(pid, &parent) || parent != getpid())
        return e;
    tl_proc_creds creds;
    tl_proc_token self;
    e = tl_proc_check_target(pid, &p->token, &creds);
    if (!e)
        e = tl_proc_token_of(getpid(), &self);
    if (e)
        return e;
    p->euid = creds.uid[1];
    p->egid = creds.gid[1];
    p->self = tl_proc_token_pack(&self);
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, p->euid, p->token.pid);
    e = make_for(p, name);
    if (e == EEXIST)
        return tl_ctl_open(pid, p); /* it made its own meanwhile (or a stale one is there: ENOTSUP) */
    if (!e && !tl_proc_alive(&p->token)) {
        tl_ctl_close(p);
        tl_shmobj_unlink(name);
        return ESRCH;
    }
    return e;
}

/*
 * A copy of the control object fd opens (then closed): 1, or 0 if it is shorter. Read, not mapped:
 * its maker, or a process with its pid, can truncate it between our size check and the read,
 * which a mapping would turn into SIGBUS.
 */
static int read_copy(int fd, tl_ctl *c)
{
    ssize_t n = pread(fd, c, sizeof *c, 0);
    close(fd);
    return n == (ssize_t)sizeof *c;
}

void tl_ctl_remove_if_dead(const tl_ctl_peer *p)
{
    if (tl_proc_alive(&p->token))
        return;
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, p->euid, p->token.pid);
    int fd;
    tl_ctl c;
    if (tl_shmobj_open(name, p->euid, TL_CTL_SIZE, &fd, NULL) || !read_copy(fd, &c))
        return;
    /* Only the dead process's own: a later process with its pid may have made its own. */
    if (atomic_load(&c.magic) == TL_CTL_MAGIC && c.pid == p->token.pid && c.start == p->token.start)
        tl_shmobj_unlink(name);
}

/* "tracelog.<euid>.<pid>" or "tracelog.<euid>.<pid>.<hex>": 1 with *pid and *stream. */
static int parse_own_name(const char *d, uint32_t euid, uint32_t *pid, int *stream)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "tracelog.%u.", euid);
    if (n <= 0 || strncmp(d, prefix, (size_t)n) != 0)
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(d + n, &end, 10);
    if (errno || end == d + n || v == 0 || v > UINT32_MAX || (*end && *end != '.'))
        return 0;
    *pid = (uint32_t)v;
    *stream = *end == '.';
    return 1;
}

/*
 * A control object whose maker is gone: its header's token is no live
 * process's. One of another size was cut short while being made (its maker
 * died between creating and sizing it): it is debris once no process has the
 * pid in its name, and would otherwise stand in the way of the next process
 * given that pid.
 */
static int ctl_object_dead(const char *path, uint32_t pid)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    int sized = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == TL_CTL_SIZE;
    if (!sized) {
        close(fd);
        tl_proc_token t;
        return S_ISREG(st.st_mode) && tl_proc_token_of((pid_t)pid, &t) == ESRCH;
    }
    tl_ctl c;
    if (!read_copy(fd, &c))
        return 0;
    tl_proc_token t = {c.pid, c.start};
    return atomic_load(&c.magic) == TL_CTL_MAGIC && !tl_proc_alive(&t);
}

unsigned tl_ctl_sweep(unsigned max)
{
    uint32_t euid = (uint32_t)geteuid(), self = (uint32_t)getpid();
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return 0;
    unsigned removed = 0, looked = 0;
    struct dirent *d;
    while ((d = readdir(dir)) != NULL && looked < max) {
        uint32_t pid;
        int stream;
        if (!parse_own_name(d->d_name, euid, &pid, &stream) || pid == self)
            continue;
        looked++;
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", d->d_name);
        /* A stream buffer of a process that is gone serves nobody new (a controller still
           draining it holds its own mapping); a control object only if its maker is gone. */
        tl_proc_token t;
        int dead = stream ? tl_proc_token_of((pid_t)pid, &t) == ESRCH : ctl_object_dead(path, pid);
        if (dead && unlink(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}
