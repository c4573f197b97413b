/*
 * Merge sets built by several threads (set.h, format-spec 6.10).
 */
#include <errno.h>
#include <string.h>

#include "common/bytes.h"
#include "writer/io.h"
#include "writer/set.h"

int tl_set_init(tl_set *s, tracelog_writer *w)
{
    memset(s, 0, sizeof *s);
    s->w = w;
    return pthread_mutex_init(&s->lock, NULL) ? ENOMEM : 0;
}

void tl_set_free(tl_set *s)
{
    tl_buf_free(&s->held);
    pthread_mutex_destroy(&s->lock);
}

int tl_set_part_init(tl_set_part *p, tl_set *s)
{
    memset(p, 0, sizeof *p);
    p->set = s;
    int level;
    tl_writer_chunk_params(s->w, &p->limit, &level); /* the limit is fixed once the writer is made */
    tl_chunk_builder_reset(&p->chunk);
    p->cctx = ZSTD_createCCtx();
    return p->cctx ? 0 : ENOMEM;
}

void tl_set_part_free(tl_set_part *p)
{
    tl_chunk_builder_free(&p->chunk);
    ZSTD_freeCCtx(p->cctx);
    tl_buf_free(&p->out);
}

/* Writes the held chunk, with MERGE_NEXT or without. Caller holds the lock. */
static tracelog_status write_held(tl_set *s, int next)
{
    if (!s->held_count)
        return TRACELOG_OK;
    s->held.data[TL_CHUNK_FLAGS_OFFSET] = next ? TL_CHUNK_MERGE_NEXT : 0;
    tracelog_status st = tl_writer_put_chunk(s->w, s->held.data, s->held.len, s->held_count);
    s->held_count = 0;
    if (!next)
        s->decoded = s->chunks = 0;
    if (st != TRACELOG_OK && s->error == TRACELOG_OK)
        s->error = st;
    return st;
}

/* What a reader holds for the chunk in the builder (spec 6.10): its body and the payloads planes rebuild. */
static uint64_t decoded_bytes(const tl_chunk_builder *b, const tl_buf *out)
{
    uint64_t n = tl_load32(out->data + 20); /* raw_size */
    for (uint32_t k = 0; k < b->nkeys; k++)
        if (b->keys[k].planes)
            n += (uint64_t)b->keys[k].count * b->keys[k].len;
    return n;
}

/*
 * Finishes the part's chunk and hands it to the set, which writes the one
 * it held. A set that would outgrow what readers merge whole ends before
 * it: the caller's window is then cut in two, which only a writer whose
 * windows exceed TL_SET_MAX_DECODED sees (recorder/drain.c keeps them smaller).
 */
static tracelog_status hand_over(tl_set_part *p)
{
    uint32_t limit;
    int level;
    tl_set *s = p->set;
    pthread_mutex_lock(&s->lock);
    tl_writer_chunk_params(s->w, &limit, &level); /* the level follows tl_writer_set_raw: asked each chunk */
    pthread_mutex_unlock(&s->lock);
    tracelog_status st = tl_chunk_finish(&p->chunk, p->cctx, level, &p->out);
    if (st != TRACELOG_OK)
        return st;
    uint64_t decoded = decoded_bytes(&p->chunk, &p->out);
    uint32_t count = p->chunk.count;
    tl_chunk_builder_reset(&p->chunk);
    pthread_mutex_lock(&s->lock);
    int fits = s->decoded + decoded <= TL_SET_MAX_DECODED && s->chunks < TL_SET_MAX_CHUNKS;
    if (!fits && s->merge)
        s->ended_early++;
    int joined = fits && s->merge; /* the held chunk and this one in one set */
    st = s->error != TRACELOG_OK ? s->error : write_held(s, joined);
    if (st != TRACELOG_OK) /* the chunk is dropped: the log is dead */
        tl_writer_count_lost(s->w, count);
    if (st == TRACELOG_OK) {
        tl_buf t = s->held;
        s->held = p->out;
        p->out = t;
        s->held_count = count;
        s->decoded += decoded;
        s->chunks++;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/*
 * A reused pthread_t: the writer defined ev's (pid, tid) with another kernel
 * tid. A definition applies to a merge set's events as a whole (format-spec
 * 6.10), so the set ends here, with the events of the earlier thread this part
 * holds in it, before the new definition goes out: else every event of the set
 * read back as the newer thread's (1,000 threads made one after the other gave
 * 9,990 of their 10,000 events one thread's kernel tid). Called and returns
 * with the set's lock held.
 */
static tracelog_status end_set_at_reuse(tl_set_part *p)
{
    tl_set *s = p->set;
    pthread_mutex_unlock(&s->lock);
    tracelog_status st = p->chunk.count ? hand_over(p) : TRACELOG_OK;
    pthread_mutex_lock(&s->lock);
    if (st == TRACELOG_OK)
        st = s->error != TRACELOG_OK ? s->error : write_held(s, 0);
    return st;
}

/* The writer learns ev's thread (its kernel tid) once per thread change, under the set's lock. */
static tracelog_status learn_thread(tl_set_part *p, const tracelog_event *ev)
{
    if (!ev->kernel_tid || (ev->kernel_tid == p->ktid && ev->pid == p->pid && ev->tid == p->tid))
        return TRACELOG_OK;
    pthread_mutex_lock(&p->set->lock);
    tracelog_status st = tl_writer_thread_reused(p->set->w, ev) ? end_set_at_reuse(p) : TRACELOG_OK;
    if (st == TRACELOG_OK)
        st = tl_writer_learn_thread(p->set->w, ev);
    if (st != TRACELOG_OK) /* the event is dropped */
        tl_writer_count_lost(p->set->w, 1);
    pthread_mutex_unlock(&p->set->lock);
    if (st == TRACELOG_OK) {
        p->ktid = ev->kernel_tid;
        p->pid = ev->pid;
        p->tid = ev->tid;
    }
    return st;
}

tracelog_status tl_set_append(tl_set_part *p, const tracelog_event *ev)
{
    if (tl_chunk_event_bound(ev) > p->limit - TL_CHUNK_TABLE_SIZE)
        return TRACELOG_E_INVAL;
    tracelog_status st = TRACELOG_OK;
    if (!tl_chunk_fits(&p->chunk, ev, p->limit))
        st = hand_over(p);
    if (st == TRACELOG_OK)
        st = learn_thread(p, ev);
    return st == TRACELOG_OK ? tl_chunk_add(&p->chunk, ev) : st;
}

tl_chunk_builder *tl_set_lane_target(tl_set_part *p, size_t *limit, tracelog_event *thread)
{
    if (!p->ktid)
        return NULL; /* no thread learnt yet */
    *thread = (tracelog_event){.kernel_tid = p->ktid, .pid = p->pid, .tid = p->tid};
    *limit = p->limit;
    return &p->chunk;
}

tracelog_status tl_set_part_finish(tl_set_part *p)
{
    return p->chunk.count ? hand_over(p) : TRACELOG_OK;
}

void tl_set_begin(tl_set *s, int merge) { s->merge = merge; }

tracelog_status tl_set_end(tl_set *s)
{
    pthread_mutex_lock(&s->lock);
    tracelog_status st = s->error != TRACELOG_OK ? s->error : write_held(s, 0);
    s->decoded = s->chunks = 0;
    pthread_mutex_unlock(&s->lock);
    return st;
}
