/*
 * Threads (format 1.1): the THREADS payload (format-spec/ptl-format.md
 * section 5.6), which maps a thread as events name it, (pid, pthread tid),
 * to its kernel thread id, and the hash map of that mapping that the
 * writer and the reader keep. Pure encoding/decoding and memory; no I/O.
 */
#ifndef TRACELOG_THREADS_H
#define TRACELOG_THREADS_H

#include "common/buf.h"
#include "format/cbor_io.h"
#include "tracelog/common.h"

/* One definition: events of (pid, tid) after it are from kernel thread ktid (never 0). */
typedef struct tl_thread_def {
    uint64_t tid;
    uint32_t pid;
    uint32_t ktid;
} tl_thread_def;

/* (pid, tid) -> ktid; open addressing, a slot is free when its ktid is 0. */
typedef struct tl_thread_map {
    tl_thread_def *slots;
    size_t cap, n;
} tl_thread_map;

/* The kernel tid of (pid, tid), 0 if unknown. */
uint32_t tl_thread_map_get(const tl_thread_map *m, uint32_t pid, uint64_t tid);
/* Sets (pid, tid) -> ktid (ktid != 0). 0, or -1 when out of memory (m unchanged). */
int tl_thread_map_set(tl_thread_map *m, uint32_t pid, uint64_t tid, uint32_t ktid);
/* Forgets every entry, keeping the memory. */
void tl_thread_map_reset(tl_thread_map *m);
void tl_thread_map_free(tl_thread_map *m);

/* THREADS encoding: an array head for n entries (tl_cbor_put_array), then each entry. */
tracelog_status tl_threads_encode_entry(const tl_thread_def *d, tl_buf *out);

/* Called for each valid entry; a non-zero return stops decoding with that status. */
typedef tracelog_status (*tl_thread_sink)(void *ctx, const tl_thread_def *d);
/*
 * Decodes one THREADS array item by item from in. TRACELOG_E_CORRUPT (reason
 * in *why) at the first invalid entry: the entries before it have been passed.
 */
tracelog_status tl_threads_decode(tl_cbor_in *in, tl_thread_sink sink, void *ctx, const char **why);

#endif
