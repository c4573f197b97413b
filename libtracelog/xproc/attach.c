/*
 * The traced process's side of cross-process tracing (see attach.h). The
 * event page stays private until the first traced-process call that may
 * make system calls; from then on the word posix_trace_event loads is the
 * first word of the control object, and a controller's TL_CTL_PENDING shows
 * up there without any thread watching.
 */
#define _GNU_SOURCE
#include "xproc/attach.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/nocancel.h"

tl_xproc_page tl_xproc_event_page __attribute__((aligned(TL_CTL_SIZE)));

#define SWEEP_MAX 64 /* names of this user looked at when a control object is made */

typedef struct local_stream {
    void *map;
    uint64_t size;
    int handle;
    uint32_t flags;
} local_stream;

/* Serialises making the control object (the remap of the event page) with changes of the word. */
static pthread_mutex_t word_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(tl_ctl *) ctl; /* set once the remap is done */
static int ctl_error;          /* why making it failed (not tried again until fork) */
static tl_xproc_ops ops;
_Atomic int tl_xproc_polling; /* the slow path is running */
static uint64_t seen[TL_CTL_SLOTS];
static local_stream locals[TL_XPROC_LOCAL];

void tl_xproc_set_ops(const tl_xproc_ops *o) { ops = *o; }

/*
 * exit(status) leaves the status in the control object: a controller that
 * finds us reaped already (the application's own waitpid was first) still
 * learns how we ended.
 */
static void record_exit(int status, void *arg)
{
    (void)arg;
    tl_ctl *c = atomic_load(&ctl);
    if (c)
        atomic_store(&c->exited, TL_CTL_EXITED | ((uint32_t)status & 0xff));
}

int tl_xproc_names_nonce(uint64_t *out)
{
    tl_ctl *c = atomic_load_explicit(&ctl, memory_order_acquire);
    if (!c)
        return ENOENT;
    *out = tl_ctl_names_nonce(c);
    return *out ? 0 : EAGAIN;
}

int tl_xproc_ensure_ctl(void)
{
    if (atomic_load_explicit(&ctl, memory_order_acquire))
        return 0;
    pthread_mutex_lock(&word_lock);
    int e = ctl_error;
    if (!e && !atomic_load(&ctl)) {
        tl_ctl *c;
        e = tl_ctl_create(tl_xproc_event_page.bytes, atomic_load(&tl_xproc_event_page.word), &c);
        if (!e) {
            atomic_store_explicit(&ctl, c, memory_order_release);
            static int exit_hooked; /* once per process image (a forked child keeps its parent's) */
            if (!exit_hooked)
                exit_hooked = on_exit(record_exit, NULL) == 0;
        }
        ctl_error = e;
        /* Processes killed or ended by _exit leave their objects: each new one clears a few. */
        if (!e)
            tl_ctl_sweep(SWEEP_MAX);
    }
    pthread_mutex_unlock(&word_lock);
    return e;
}

int tl_xproc_adopt_if_made(void)
{
    char name[TL_SHM_NAME_MAX];
    tl_ctl_name(name, (uint32_t)geteuid(), (uint32_t)getpid());
    int fd;
    int e = tl_shmobj_open(name, (uint32_t)geteuid(), TL_CTL_SIZE, &fd, NULL);
    if (e)
        return e == ENOENT ? 0 : e;
    close(fd);
    e = tl_xproc_ensure_ctl();
    if (!e && (atomic_load(&tl_xproc_event_page.word) & TL_CTL_PENDING))
        tl_xproc_poll();
    return e;
}

int tl_xproc_has_ctl(void) { return atomic_load_explicit(&ctl, memory_order_acquire) != NULL; }

/* Once the control object exists the page never moves again: no lock needed (and none may be
   taken: the slow path publishes from posix_trace_event, maybe in a signal handler). */
void tl_xproc_word_set(uint64_t bits)
{
    if (atomic_load_explicit(&ctl, memory_order_acquire)) {
        atomic_fetch_or(&tl_xproc_event_page.word, bits);
        return;
    }
    pthread_mutex_lock(&word_lock);
    atomic_fetch_or(&tl_xproc_event_page.word, bits);
    pthread_mutex_unlock(&word_lock);
}

void tl_xproc_word_clear(uint64_t bits)
{
    if (atomic_load_explicit(&ctl, memory_order_acquire)) {
        atomic_fetch_and(&tl_xproc_event_page.word, ~bits);
        return;
    }
    pthread_mutex_lock(&word_lock);
    atomic_fetch_and(&tl_xproc_event_page.word, ~bits);
    pthread_mutex_unlock(&word_lock);
}

/*
 * Lets a buffer go without unmapping it: a thread may still be recording
 * into it. Its pages are replaced by fresh zero pages (the shared memory is
 * released; a late producer finds a stream of 0 lanes and leaves).
 */
static void retire(void *map, uint64_t size)
{
    if (mmap(map, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) ==
        MAP_FAILED)
        madvise(map, size, MADV_DONTNEED);
}

static void release_local(unsigned i)
{
    local_stream *l = &locals[i];
    if (!l->map)
        return;
    if (ops.unpublish)
        ops.unpublish(l->handle);
    retire(l->map, l->size);
    *l = (local_stream){NULL, 0, -1, 0};
}

/* Opens, checks and maps a stream buffer and publishes it as local slot i. 0 or an errno. */
static int join(unsigned i, const char *name, uint64_t size, uint64_t id, uint32_t flags)
{
    if (!ops.validate || !ops.publish)
        return ENOTSUP; /* no POSIX layer to hand it to */
    int fd;
    uint64_t actual;
    int e = tl_shmobj_open(name, (uint32_t)geteuid(), size, &fd, &actual);
    if (e)
        return e;
    if (actual == 0 || actual > TL_CTL_MAX_STREAM) {
        close(fd);
        return ENOTSUP;
    }
    void *m = mmap(NULL, actual, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return ENOMEM;
    e = ops.validate(m, actual, id);
    if (e) {
        munmap(m, actual);
        return e;
    }
    release_local(i);
    int h = ops.publish(m, actual, id, flags);
    if (h < 0) {
        munmap(m, actual);
        return -h;
    }
    locals[i] = (local_stream){m, actual, h, flags};
    return 0;
}

static int on_announce(void *ctx, unsigned slot, const tl_announce *a)
{
    (void)ctx;
    if (a->op == TL_CTL_DETACH) {
        release_local(slot);
        return 0;
    }
    return join(slot, a->name, a->size, a->id, a->flags);
}

/* initial-exec TLS: no lazy allocation, so it is safe in a signal handler. */
static __thread int polling_here __attribute__((tls_model("initial-exec")));

void tl_xproc_poll(void)
{
    tl_ctl *c = atomic_load_explicit(&ctl, memory_order_acquire);
    if (!c)
        return;
    /* Another thread maps what was announced: until it is done the stream is not in the word, and an event
       recorded now would be dropped without a count. A handler interrupting our own poll cannot wait for it. */
    for (int idle = 0; !atomic_compare_exchange_strong(&tl_xproc_polling, &idle, 1); idle = 0) {
        if (polling_here)
            return;
        sched_yield();
    }
    polling_here = 1;
    /* Its opens and maps are cancellation points: a thread cancelled there left the poll marked busy,
       and every later event of every thread waited for it for ever (a review). */
    int cancel = tl_nocancel_begin();
    atomic_fetch_or(&tl_xproc_event_page.word, TL_XPROC_POLLING); /* before tl_ctl_poll clears TL_CTL_PENDING */
    tl_ctl_poll(c, seen, on_announce, NULL);
    atomic_fetch_and(&tl_xproc_event_page.word, ~TL_XPROC_POLLING); /* after the new streams are published */
    polling_here = 0;
    atomic_store(&tl_xproc_polling, 0);
    tl_nocancel_end(cancel);
}

void tl_xproc_wait_poll(void)
{
    while ((atomic_load(&tl_xproc_event_page.word) & TL_XPROC_POLLING) && !polling_here)
        sched_yield();
}

/* "NAME:ID" (ID in hex), or EINVAL. */
static int parse_env(const char *v, char name[TL_SHM_NAME_MAX], uint64_t *id)
{
    const char *colon = strrchr(v, ':');
    if (!colon || (size_t)(colon - v) >= TL_SHM_NAME_MAX)
        return EINVAL;
    memcpy(name, v, (size_t)(colon - v));
    name[colon - v] = '\0';
    char *end;
    errno = 0;
    unsigned long long n = strtoull(colon + 1, &end, 16);
    if (errno || end == colon + 1 || *end)
        return EINVAL;
    *id = n;
    return tl_ctl_stream_name_valid(name, (uint32_t)geteuid(), 0) ? 0 : EINVAL;
}

int tl_xproc_join_env(void)
{
    const char *v = getenv(TL_XPROC_ENV);
    if (!v || !*v)
        return 0;
    char name[TL_SHM_NAME_MAX];
    uint64_t id;
    int e = parse_env(v, name, &id);
    if (e)
        return e;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&tl_xproc_polling, &idle, 1))
        return EAGAIN;
    polling_here = 1; /* a signal handler's event meanwhile must not wait for us (tl_xproc_poll) */
    tl_xproc_word_set(TL_XPROC_POLLING);
    e = join(TL_XPROC_ENV_SLOT, name, 0, id, TL_CTL_FLAG_INHERITED);
    tl_xproc_word_clear(TL_XPROC_POLLING);
    polling_here = 0;
    atomic_store(&tl_xproc_polling, 0);
    return e;
}

char **tl_xproc_env_with(char *const envp[], const char *name, uint64_t id)
{
    static const char key[] = TL_XPROC_ENV "=";
    size_t n = 0;
    while (envp && envp[n])
        n++;
    size_t text = sizeof key + strlen(name) + 1 + 16 + 1;
    char **out = malloc((n + 2) * sizeof *out + text);
    if (!out)
        return NULL;
    char *entry = (char *)(out + n + 2);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], key, sizeof key - 1) != 0)
            out[k++] = envp[i];
    /* snprintf is avoided for the id: this may run between fork and exec. */
    char *p = entry;
    memcpy(p, key, sizeof key - 1);
    p += sizeof key - 1;
    size_t nl = strlen(name);
    memcpy(p, name, nl);
    p += nl;
    *p++ = ':';
    for (int shift = 60; shift >= 0; shift -= 4)
        *p++ = "0123456789abcdef"[(id >> shift) & 15];
    *p = '\0';
    out[k++] = entry;
    out[k] = NULL;
    return out;
}

void tl_xproc_after_fork_child(void)
{
    static pid_t done_for;
    pid_t me = getpid();
    if (done_for == me)
        return;
    done_for = me;
    /* The lock is only taken around the one remap; a fork in the middle of it is not supported. */
    pthread_mutex_init(&word_lock, NULL);
    /* No request and no poll of the parent's in the child's own word; if the page cannot be made
       private it is still the parent's, and left alone. */
    if (!atomic_load(&ctl) || tl_ctl_privatize(tl_xproc_event_page.bytes) == 0)
        atomic_fetch_and(&tl_xproc_event_page.word, ~(TL_CTL_PENDING | TL_XPROC_POLLING));
    atomic_store(&ctl, NULL);
    ctl_error = 0;
    memset(seen, 0, sizeof seen);
    atomic_store(&tl_xproc_polling, 0);
    polling_here = 0;
    for (unsigned i = 0; i < TL_XPROC_LOCAL; i++)
        if (locals[i].map && !(locals[i].flags & TL_CTL_FLAG_INHERITED))
            release_local(i);
}

void *tl_xproc_local_map(unsigned i, uint64_t *size, int *handle)
{
    if (i >= TL_XPROC_LOCAL)
        return NULL;
    if (size)
        *size = locals[i].size;
    if (handle)
        *handle = locals[i].handle;
    return locals[i].map;
}

/*
 * Also called first by the POSIX layer's own fork handler (posix/process.c),
 * which must not touch the event word before it is the child's: whichever
 * comes first does the work.
 */
__attribute__((constructor)) static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, tl_xproc_after_fork_child);
}

/* The name goes with the process (a killed process's is replaced by the next one with its pid). */
__attribute__((destructor)) static void remove_ctl_name(void)
{
    tl_ctl *c = atomic_load(&ctl);
    if (c)
        tl_ctl_unlink_own(c);
}
