/*
 * Reading shared memory another process can shrink (design note, section
 * 9, item 11). The traced program holds the name of a stream buffer open to
 * it, so it can ftruncate() the object: the controller's next read of a
 * page past the new end raises SIGBUS. A guarded read turns that into
 * EFAULT instead of a crash, as LTTng's consumer does with its SIGBUS
 * "transactions".
 *
 * A mapping is registered once; a guarded read runs with a per-thread jump
 * point; the SIGBUS handler (installed at the first registration, with
 * SA_NODEFER so that leaving it by siglongjmp needs no signal-mask system
 * call) jumps back for a fault inside a registered mapping during a
 * guarded read. A fault inside a registered mapping outside a guarded read
 * replaces that whole mapping with private zero pages and lets the access
 * run again: it reads zeros, as every later access does (the mapping stays
 * registered until unregistered; unregister before munmap: it waits for a
 * handler that is filling the mapping). Any other SIGBUS goes to the
 * handler that was there before, or gets the default action (the process
 * dies by SIGBUS, core intact).
 */
#ifndef TRACELOG_XPROC_GUARD_H
#define TRACELOG_XPROC_GUARD_H

#include <signal.h>
#include <stddef.h>

#define TL_GUARD_RANGES 256 /* a traced process takes up to three: stream buffer, name map, control object */

/* Registers [base, base + len) as memory another process may shrink. 0, EAGAIN (table full) or an errno. */
int tl_guard_register(const void *base, size_t len);
void tl_guard_unregister(const void *base);

/* memcpy from a registered mapping: 0, or EFAULT if the pages are gone (nothing else is done). */
int tl_guard_copy(void *dst, const void *src, size_t n);

/*
 * Runs fn(arg) guarded: its return value, or EFAULT if it touched a page of
 * a registered mapping that is gone (fn is abandoned at that point: it must
 * only have changed state it can find consistent again, i.e. no lock held,
 * nothing allocated but not yet recorded). Calls may nest.
 */
int tl_guard_run(int (*fn)(void *), void *arg);

/*
 * 1 if the SIGBUS described by si is a fault in a registered mapping: a
 * guarded read on this thread jumps back from it, any other access finds
 * zeros. Not a crash: a SIGBUS handler installed after ours must pass it on
 * (to ours) instead of treating it as one (the crash handler once wrote the
 * logs for it, and faulted again doing so with SIGBUS blocked: the
 * controller died).
 */
int tl_guard_claims(const siginfo_t *si);

#endif
