/*
 * Guarded reads of shared memory another process can shrink
 * (libtracelog/xproc/guard.c; design note, section 9 item 11): a read of a
 * truncated page gives EFAULT, again and again (nothing is left blocked),
 * also from several threads at once; guarded sections nest; an access
 * outside a guarded read to a registered mapping that was truncated reads
 * zeros from then on (the name map and the control object a controller maps
 * are read that way: a traced program truncating them once killed ptlog);
 * any other SIGBUS still kills the process with SIGBUS, or reaches the
 * handler that was installed before.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/guard.h"
#include "xproc_helpers.h"

#define PAGE 4096u

typedef struct shrinkable {
    int fd;
    unsigned char *map;
} shrinkable;

/* Two pages of shared memory whose object we can truncate, like a traced program could. */
static shrinkable make_shrinkable(void)
{
    shrinkable s;
    s.fd = memfd_create("guard-test", MFD_CLOEXEC);
    if (s.fd < 0 || ftruncate(s.fd, 2 * PAGE))
        TL_DIE("memfd");
    s.map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
    if (s.map == MAP_FAILED)
        TL_DIE("mmap");
    memset(s.map, 0xab, 2 * PAGE);
    return s;
}

static void drop(shrinkable *s)
{
    tl_guard_unregister(s->map);
    munmap(s->map, 2 * PAGE);
    close(s->fd);
}

static void test_truncated_page_gives_efault(void)
{
    shrinkable s = make_shrinkable();
    CHECK_ERR(tl_guard_register(s.map, 2 * PAGE), 0);
    unsigned char buf[64];
    CHECK_ERR(tl_guard_copy(buf, s.map + PAGE, sizeof buf), 0);
    CHECK_EQ(buf[0], 0xab);
    if (ftruncate(s.fd, PAGE))
        TL_DIE("ftruncate");
    int efault = 0;
    for (int i = 0; i < 1000; i++) /* every time: SIGBUS is never left blocked */
        efault += tl_guard_copy(buf, s.map + PAGE + (size_t)(i % 64), sizeof buf) == EFAULT;
    CHECK_EQ(efault, 1000);
    CHECK_ERR(tl_guard_copy(buf, s.map + PAGE - 32, 32), 0); /* the page that is left */
    CHECK_EQ(buf[31], 0xab);
    CHECK_ERR(tl_guard_copy(buf, s.map + PAGE - 32, 64), EFAULT); /* across the new end */
    drop(&s);
}

static int inner(void *p)
{
    shrinkable *s = p;
    return s->map[PAGE + 5];
}

static int outer(void *p)
{
    shrinkable *s = p;
    int r = tl_guard_run(inner, s); /* EFAULT, and we carry on */
    return r == EFAULT ? s->map[5] : -1;
}

/* A handler installed after ours sees the fault first: tl_guard_claims tells it to pass it on. */
static struct sigaction guard_handler;
static volatile sig_atomic_t later_saw, later_claimed;

static void later_handler(int sig, siginfo_t *si, void *uc)
{
    later_saw++;
    if (tl_guard_claims(si)) {
        later_claimed++;
        guard_handler.sa_sigaction(sig, si, uc);
    }
}

static void test_handler_installed_later(void)
{
    shrinkable s = make_shrinkable();
    CHECK_ERR(tl_guard_register(s.map, 2 * PAGE), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = later_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGBUS, &sa, &guard_handler);
    if (ftruncate(s.fd, PAGE))
        TL_DIE("ftruncate");
    unsigned char buf[8];
    CHECK_ERR(tl_guard_copy(buf, s.map + PAGE, sizeof buf), EFAULT);
    CHECK_EQ_INT(later_saw, 1);
    CHECK_EQ_INT(later_claimed, 1);
    /* An access outside a guarded read is claimed too (the crash handler took it for a crash): passed on,
       it finds zeros. */
    CHECK_EQ(((volatile unsigned char *)s.map)[PAGE + 2], 0);
    CHECK_EQ_INT(later_saw, 2);
    CHECK_EQ_INT(later_claimed, 2);
    sigaction(SIGBUS, &guard_handler, NULL);
    drop(&s);
}

static void test_nested(void)
{
    shrinkable s = make_shrinkable();
    CHECK_ERR(tl_guard_register(s.map, 2 * PAGE), 0);
    if (ftruncate(s.fd, PAGE))
        TL_DIE("ftruncate");
    CHECK_EQ_INT(tl_guard_run(outer, &s), 0xab);
    drop(&s);
}

typedef struct thread_args {
    shrinkable *s;
    int faults, oks;
} thread_args;

static void *reader(void *p)
{
    thread_args *a = p;
    unsigned char buf[128];
    for (int i = 0; i < 20000; i++) {
        int e = tl_guard_copy(buf, a->s->map + PAGE + (size_t)(i % 512), sizeof buf);
        if (e == EFAULT)
            a->faults++;
        else if (e == 0)
            a->oks++;
    }
    return NULL;
}

static void test_threads_while_truncating(void)
{
    shrinkable s = make_shrinkable();
    CHECK_ERR(tl_guard_register(s.map, 2 * PAGE), 0);
    thread_args a[2] = {{&s, 0, 0}, {&s, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, reader, &a[i]);
    for (int i = 0; i < 200; i++)
        if (ftruncate(s.fd, (i & 1) ? 2 * PAGE : PAGE))
            TL_DIE("ftruncate");
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(a[0].faults + a[0].oks, 20000);
    CHECK_EQ(a[1].faults + a[1].oks, 20000);
    drop(&s);
}

/*
 * A registered mapping truncated under an access that is not guarded: the
 * access reads zeros, and so does every later one, the page that is left
 * included (the whole mapping is replaced); writes land in private memory.
 */
static void test_unguarded_access_reads_zeros(void)
{
    shrinkable s = make_shrinkable();
    CHECK_ERR(tl_guard_register(s.map, 2 * PAGE), 0);
    volatile unsigned char *m = s.map;
    CHECK_EQ(m[PAGE + 1], 0xab);
    if (ftruncate(s.fd, PAGE))
        TL_DIE("ftruncate");
    CHECK_EQ(m[PAGE + 1], 0);
    CHECK_EQ(m[0], 0);
    __atomic_fetch_or((unsigned *)(void *)(s.map + PAGE + 64), 1u, __ATOMIC_SEQ_CST); /* as the control object's flags */
    CHECK_EQ(m[PAGE + 64], 1);
    unsigned char buf[8];
    CHECK_ERR(tl_guard_copy(buf, s.map + PAGE, sizeof buf), 0); /* a guarded read finds the zeros too */
    CHECK_EQ(buf[0], 0);
    CHECK_EQ(pread(s.fd, buf, 1, 0), 1); /* the object itself is left as the other process made it */
    CHECK_EQ(buf[0], 0xab);
    drop(&s);
}

/*
 * In a child: a fault the guard must not swallow (in a mapping it does not
 * know, guarded or not). Returns the child's wait status code.
 */
static int child_fault(int previous_handler, int guarded)
{
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        if (previous_handler) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = _exit; /* _exit(SIGBUS): proves it was called */
            sigaction(SIGBUS, &sa, NULL);
        }
        shrinkable s = make_shrinkable();
        shrinkable other = make_shrinkable();
        if (tl_guard_register(s.map, 2 * PAGE))
            _exit(2);
        if (ftruncate(s.fd, PAGE) || ftruncate(other.fd, PAGE))
            _exit(3);
        if (guarded) {
            unsigned char buf[8];
            tl_guard_copy(buf, other.map + PAGE, sizeof buf);
        } else {
            volatile unsigned char c = other.map[PAGE + 1];
            (void)c;
        }
        _exit(0);
    }
    return xp_wait(pid);
}

static void test_other_faults_are_not_swallowed(void)
{
    CHECK_EQ_INT(child_fault(0, 0), 128 + SIGBUS);
    CHECK_EQ_INT(child_fault(0, 1), 128 + SIGBUS);
    CHECK_EQ_INT(child_fault(1, 0), SIGBUS); /* the earlier handler ran */
    CHECK_EQ_INT(child_fault(1, 1), SIGBUS);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_truncated_page_gives_efault);
    PT_RUN(test_nested);
    PT_RUN(test_handler_installed_later);
    PT_RUN(test_threads_while_truncating);
    PT_RUN(test_unguarded_access_reads_zeros);
    if (PT_SANITIZED)
        printf("SKIP test_other_faults_are_not_swallowed: the sanitizer's own SIGBUS handler decides there\n");
    else
        PT_RUN(test_other_faults_are_not_swallowed);
    return pt_finish();
}
