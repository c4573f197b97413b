/*
 * posix_trace_event from a signal handler (posix-trace.md §9.3 and P36:
 * "posix_trace_event() is on the XSH 2.4.3 list of functions that shall be
 * async-signal-safe"): a handler records events while the thread it
 * interrupted is itself in the middle of recording. Every event of both must
 * be there, intact, each source in its own order.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_main, ev_sig;
static atomic_uint handled;
static atomic_uint progress; /* events recorded by the interrupted thread */

/* Payloads of two sizes, filled with a pattern derived from the sequence number: any mix-up shows. */
typedef struct {
    uint32_t seq;
    uint8_t fill[28];
} small_payload;

typedef struct {
    uint32_t seq;
    uint8_t fill[92];
} big_payload;

static void fill(uint8_t *p, size_t n, uint32_t seq, uint8_t salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seq * 31u + i * 7u + salt);
}

static int filled(const uint8_t *p, size_t n, uint32_t seq, uint8_t salt)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seq * 31u + i * 7u + salt))
            return 0;
    return 1;
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    big_payload p;
    p.seq = atomic_fetch_add(&handled, 1);
    fill(p.fill, sizeof p.fill, p.seq, 0x5a);
    posix_trace_event(ev_sig, &p, sizeof p);
    errno = saved;
}

typedef struct {
    pthread_t target;
    atomic_int stop;
    unsigned sent;
} sender_arg;

static void *sender(void *p)
{
    sender_arg *s = p;
    while (!atomic_load(&s->stop)) {
        unsigned before = atomic_load(&progress);
        pthread_kill(s->target, SIGUSR1);
        s->sent++;
        /* Wait until it is handled, so that signals are not merged and each one lands somewhere new, and until
           the thread recorded again: at most one handler event per event of the thread (bounded stream use). */
        while ((atomic_load(&handled) < s->sent || atomic_load(&progress) == before) && !atomic_load(&s->stop))
            ;
    }
    return NULL;
}

/* Checks the events of the two sources as they are read (possibly in several batches). */
typedef struct {
    uint32_t next_main, next_sig;
    int bad, order, tid;
    uint64_t prev;
} checker;

static void check_batch(checker *c, const pt_events *ev)
{
    for (size_t i = 0; i < ev->n; i++) {
        const pt_event *e = &ev->ev[i];
        uint64_t ts = pt_ns(&e->info.posix_timestamp);
        c->order &= ts >= c->prev;
        c->prev = ts;
        if (e->info.posix_event_id == ev_main) {
            small_payload p;
            if (e->len != sizeof p) {
                c->bad++;
                continue;
            }
            memcpy(&p, e->data, sizeof p);
            if (p.seq != c->next_main || !filled(p.fill, sizeof p.fill, p.seq, 0xa5))
                c->bad++;
            c->next_main = p.seq + 1;
            c->tid &= pthread_equal(e->info.posix_thread_id, pthread_self());
        } else if (e->info.posix_event_id == ev_sig) {
            big_payload p;
            if (e->len != sizeof p) {
                c->bad++;
                continue;
            }
            memcpy(&p, e->data, sizeof p);
            if (p.seq != c->next_sig || !filled(p.fill, sizeof p.fill, p.seq, 0x5a))
                c->bad++;
            c->next_sig = p.seq + 1;
            /* The handler ran on the interrupted thread. */
            c->tid &= pthread_equal(e->info.posix_thread_id, pthread_self());
        }
    }
}

static void check_final(const checker *c, uint32_t n_main, uint32_t n_sig)
{
    CHECK_MSG(c->bad == 0, "no event lost, doubled or corrupted (%d bad)", c->bad);
    CHECK_MSG(c->next_main == n_main, "all %u events of the thread: %u", n_main, c->next_main);
    CHECK_MSG(c->next_sig == n_sig, "all %u events of the handler: %u", n_sig, c->next_sig);
    CHECK_MSG(c->order, "timestamps never go backwards");
    CHECK_MSG(c->tid, "thread id of the thread the handler interrupted");
}

/* Reads everything there is into the checker. */
static void drain(trace_id_t t, checker *c)
{
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    check_batch(c, &ev);
    pt_events_free(&ev);
}

/* Signals from another thread land at any point of the main thread's posix_trace_event calls. */
static void test_async_signals(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, &old);
    atomic_store(&handled, 0);

    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 32u << 20, sizeof(big_payload));
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    sender_arg s = {pthread_self(), 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, sender, &s);
    /* Record until enough signals were handled (or 3 s passed), reading the stream out now and then. */
    checker c = {0, 0, 0, 1, 1, 0};
    uint32_t want_signals = 1000, n = 0;
    uint64_t give_up = pt_now_ns() + 3000000000ull;
    while (n < 100000 || atomic_load(&handled) < want_signals) {
        small_payload p;
        p.seq = n;
        fill(p.fill, sizeof p.fill, n, 0xa5);
        posix_trace_event(ev_main, &p, sizeof p);
        n++;
        atomic_store(&progress, n);
        if (n % 20000 == 0) {
            drain(t, &c);
            if (pt_now_ns() > give_up)
                break;
        }
    }
    atomic_store(&s.stop, 1);
    pthread_join(th, NULL);
    /* A signal sent last may still be pending: let it be handled before counting. */
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    uint32_t n_sig = atomic_load(&handled);
    printf("   %u events from the thread, %u from the handler\n", n, n_sig);
    CHECK_MSG(n_sig > 0, "signals were handled while recording");

    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    CHECK_EQ(st.events_lost, 0);
    CHECK_ERR(posix_trace_stop(t), 0);
    drain(t, &c);
    check_final(&c, n, n_sig);
    pt_shutdown(t);
    sigaction(SIGUSR1, &old, NULL);
}

/* raise() inside a loop: the handler records synchronously, interleaved with the thread's own events. */
static void test_raise(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR2, &sa, &old);
    atomic_store(&handled, 0);
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 8u << 20, sizeof(big_payload));
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    enum { N = 3000 };
    for (uint32_t i = 0; i < N; i++) {
        small_payload p;
        p.seq = i;
        fill(p.fill, sizeof p.fill, i, 0xa5);
        posix_trace_event(ev_main, &p, sizeof p);
        if (i % 3 == 0)
            raise(SIGUSR2);
    }
    CHECK_ERR(posix_trace_stop(t), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    checker c = {0, 0, 0, 1, 1, 0};
    check_batch(&c, &ev);
    check_final(&c, N, N / 3);
    /* Interleaving: the handler's k-th event comes right after the thread's event 3k. */
    int interleaved = 1;
    for (size_t i = 0; i + 1 < ev.n; i++) {
        const pt_event *e = &ev.ev[i], *f = &ev.ev[i + 1];
        if (e->info.posix_event_id != ev_main)
            continue;
        uint32_t seq;
        memcpy(&seq, e->data, sizeof seq);
        if (seq % 3 == 0)
            interleaved &= f->info.posix_event_id == ev_sig;
    }
    CHECK_MSG(interleaved, "each handler event follows the event recorded just before raise()");
    pt_events_free(&ev);
    pt_shutdown(t);
    sigaction(SIGUSR2, &old, NULL);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("signal: main", &ev_main) || posix_trace_eventid_open("signal: handler", &ev_sig))
        TL_DIE("eventid_open failed");
    PT_RUN(test_async_signals);
    PT_RUN(test_raise);
    return pt_finish();
}
