#define _GNU_SOURCE
#include "gen.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "zstd_frame.h"

vec V;

static void die(const char *what)
{
    fprintf(stderr, "gen_vectors: %s: %s\n", V.name ? V.name : "-", what);
    exit(2);
}

/* ---- bytes ----------------------------------------------------------------- */

static void b_reserve(bytes *b, size_t n)
{
    if (b->len + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        die("out of memory");
    b->cap = cap;
}

void b_put(bytes *b, const void *p, size_t n)
{
    b_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

void b_u8(bytes *b, uint8_t v) { b_put(b, &v, 1); }

void b_u32(bytes *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b_u8(b, (uint8_t)(v >> 8 * i));
}

void b_u64(bytes *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b_u8(b, (uint8_t)(v >> 8 * i));
}

void b_fill(bytes *b, uint8_t v, size_t n)
{
    b_reserve(b, n);
    memset(b->p + b->len, v, n);
    b->len += n;
}

void b_free(bytes *b)
{
    free(b->p);
    *b = (bytes){0};
}

static void put32_at(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

/* ---- CBOR ------------------------------------------------------------------ */

void cb_head_w(bytes *b, unsigned major, uint64_t arg, int width)
{
    static const uint8_t ai[] = {0, 24, 25, 0, 26, 0, 0, 0, 27};
    if (width == 0) {
        b_u8(b, (uint8_t)(major << 5 | arg));
        return;
    }
    b_u8(b, (uint8_t)(major << 5 | ai[width]));
    for (int i = width - 1; i >= 0; i--)
        b_u8(b, (uint8_t)(arg >> 8 * i));
}

void cb_head(bytes *b, unsigned major, uint64_t arg)
{
    int w = arg < 24 ? 0 : arg <= 0xff ? 1 : arg <= 0xffff ? 2 : arg <= 0xffffffffu ? 4 : 8;
    cb_head_w(b, major, arg, w);
}

void cb_uint(bytes *b, uint64_t v) { cb_head(b, 0, v); }
void cb_textn(bytes *b, const void *s, size_t n)
{
    cb_head(b, 3, n);
    b_put(b, s, n);
}
void cb_text(bytes *b, const char *s) { cb_textn(b, s, strlen(s)); }
void cb_map(bytes *b, uint64_t pairs) { cb_head(b, 5, pairs); }
void cb_array(bytes *b, uint64_t items) { cb_head(b, 4, items); }
void cb_bool(bytes *b, int v) { b_u8(b, v ? 0xF5 : 0xF4); }

void cb_raw(bytes *b, const char *hex)
{
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        unsigned v;
        if (sscanf(p, "%2x", &v) != 1)
            die("bad hex");
        b_u8(b, (uint8_t)v);
        p += 2;
    }
}

/* ---- the vector -------------------------------------------------------------- */

const tracelog_metadata META_STD = {
    .trace_name = "demo",
    .generation_version = "tl 0.1",
    .creation_time_ns = T0,
    .clock_id = "CLOCK_REALTIME",
    .clock_source = "clock_gettime",
    .clock_resolution_ns = 1,
    .max_data_size = 64,
    .stream_min_size = 4096,
    .log_max_size = 0,
    .stream_full_policy = TRACELOG_POLICY_LOOP,
    .log_full_policy = TRACELOG_POLICY_APPEND,
    .inherited = 0,
    .hostname = "h",
    .os_name = "Linux",
    .os_release = "6.1",
    .machine = "x86_64",
    .pid = 42,
    .program = "demo",
};

/* The three events of the spec's worked example (section 13). */
void std_events(tracelog_event ev[3])
{
    ev[0] = ev_make(T0 + 1500, 1, 42, 7, 0x401000, 0, 2, "hi");
    ev[1] = ev_make(T0 + 1000, 2, 42, 7, 0x401010, 0, 3, "abc");
    ev[2] = ev_make(T0 + 1250, 2, 42, 8, 0x401010, 1, 0, NULL);
}

void vec_begin(const char *name, const char *about)
{
    b_free(&V.file);
    vec_reading_free(&V.want);
    memset(&V, 0, sizeof V);
    V.name = name;
    V.about = about;
    vec_reading_init(&V.want);
    V.want.meta.stream_full_policy = TRACELOG_POLICY_LOOP;
    V.want.meta.log_full_policy = TRACELOG_POLICY_APPEND;
}

void vec_header(const hopt *h)
{
    static const hopt none = {0};
    if (!h)
        h = &none;
    uint32_t size = h->header_size ? h->header_size : 64;
    uint8_t hdr[4096] = {0};
    memcpy(hdr, h->magic ? h->magic : "\x8BPTL\r\n\x1A\n", 8);
    uint16_t major = h->has_major ? h->major : 1, minor = h->has_minor ? h->minor : 0;
    hdr[8] = (uint8_t)major, hdr[9] = (uint8_t)(major >> 8);
    hdr[10] = (uint8_t)minor, hdr[11] = (uint8_t)(minor >> 8);
    put32_at(hdr + 12, size);
    put32_at(hdr + 16, h->incompat);
    put32_at(hdr + 20, h->compat);
    V.salt = h->salt ? h->salt : SALT_DEFAULT;
    uint64_t created = h->created_ns ? h->created_ns : T0;
    for (int i = 0; i < 8; i++) {
        hdr[24 + i] = (uint8_t)(V.salt >> 8 * i);
        hdr[32 + i] = (uint8_t)(created >> 8 * i);
        hdr[48 + i] = (uint8_t)(h->ring_offset >> 8 * i);
    }
    hdr[40] = h->layout;
    hdr[41] = h->reserved41;
    put32_at(hdr + 44, h->segment_size);
    put32_at(hdr + 56, h->segment_count);
    size_t n = size <= sizeof hdr ? size : 64;
    for (size_t i = 64; i + 4 < n; i++)
        hdr[i] = (uint8_t)(0xA0 + i % 16); /* fields of a later minor version */
    put32_at(hdr + n - 4, tl_crc32c(0, hdr, n - 4) ^ (h->bad_crc ? 1u : 0u));
    b_put(&V.file, hdr, n);
    V.salt32 = (uint32_t)(V.salt ^ (V.salt >> 32));
    V.header_size = size;
    V.layout = h->layout;
    if (h->layout == 1)
        V.want.meta.log_full_policy = TRACELOG_POLICY_LOOP;
}

void expect_problem(const char *condition, uint64_t offset, uint64_t length)
{
    vec_add_problem(&V.want, condition, offset, length);
}

void expect_open(const char *condition) { V.want.open = condition; }

void expect_clean(int clean)
{
    V.clean_set = 1;
    V.clean_value = clean;
}

void expect_event(const tracelog_event *ev) { vec_add_event(&V.want, ev); }

/* ---- blocks ------------------------------------------------------------------ */

static const bopt no_opt = {0};

uint64_t w_block(uint16_t type, const void *payload, size_t len, const bopt *o)
{
    if (!o)
        o = &no_opt;
    uint64_t off = o->has_at ? o->at : V.file.len;
    uint64_t seq = o->has_seq ? o->seq : V.next_seq;
    if (seq >= V.next_seq)
        V.next_seq = seq + 1;
    uint8_t h[32] = {0x8B, 'B', 'L', 'K'};
    h[4] = (uint8_t)type, h[5] = (uint8_t)(type >> 8);
    h[6] = (uint8_t)o->flags, h[7] = (uint8_t)(o->flags >> 8);
    for (int i = 0; i < 8; i++)
        h[8 + i] = (uint8_t)(seq >> 8 * i);
    put32_at(h + 16, o->has_len ? o->len : (uint32_t)len);
    put32_at(h + 20, tl_crc32c(V.salt32, payload, len) ^ (o->bad_payload_crc ? 1u : 0u));
    put32_at(h + 24, o->reserved);
    put32_at(h + 28, tl_crc32c(V.salt32, h, 28) ^ (o->bad_header_crc ? 1u : 0u));
    bytes blk = {0};
    b_put(&blk, h, 32);
    b_put(&blk, payload, len);
    b_fill(&blk, o->pad_byte, (8 - len % 8) % 8);
    if (off + blk.len > V.file.len)
        b_fill(&V.file, 0, off + blk.len - V.file.len);
    memcpy(V.file.p + off, blk.p, blk.len);
    b_free(&blk);
    if (!o->bad_header_crc && type != 6)
        V.closed = 0;
    return off;
}

static void meta_cbor(bytes *b, const tracelog_metadata *m)
{
    cb_map(b, 14);
    meta_pairs(b, m);
}

void meta_pairs(bytes *b, const tracelog_metadata *m)
{
    static const char *const policies[] = {"", "loop", "until_full", "flush", "append"};
    cb_text(b, "trace_name"), cb_text(b, m->trace_name);
    cb_text(b, "generation_version"), cb_text(b, m->generation_version);
    cb_text(b, "creation_time_ns"), cb_uint(b, m->creation_time_ns);
    cb_text(b, "clock_id"), cb_text(b, m->clock_id);
    cb_text(b, "clock_source"), cb_text(b, m->clock_source);
    cb_text(b, "clock_resolution_ns"), cb_uint(b, m->clock_resolution_ns);
    cb_text(b, "max_data_size"), cb_uint(b, m->max_data_size);
    cb_text(b, "stream_min_size"), cb_uint(b, m->stream_min_size);
    cb_text(b, "log_max_size"), cb_uint(b, m->log_max_size);
    cb_text(b, "stream_full_policy"), cb_text(b, policies[m->stream_full_policy]);
    cb_text(b, "log_full_policy"), cb_text(b, policies[m->log_full_policy]);
    cb_text(b, "inheritance"), cb_text(b, m->inherited ? "inherited" : "close_for_child");
    cb_text(b, "host"), cb_map(b, 4);
    cb_text(b, "hostname"), cb_text(b, m->hostname);
    cb_text(b, "os_name"), cb_text(b, m->os_name);
    cb_text(b, "os_release"), cb_text(b, m->os_release);
    cb_text(b, "machine"), cb_text(b, m->machine);
    cb_text(b, "process"), cb_map(b, 2);
    cb_text(b, "pid"), cb_uint(b, m->pid);
    cb_text(b, "program"), cb_text(b, m->program);
}

static int applies(const bopt *o) { return !o || (!o->no_apply && !o->bad_header_crc && !o->bad_payload_crc); }

uint64_t w_meta(const tracelog_metadata *m, const bopt *o)
{
    bytes b = {0};
    meta_cbor(&b, m);
    uint64_t off = w_block(1, b.p, b.len, o);
    b_free(&b);
    if (applies(o) && !V.have_meta) {
        V.want.meta = *m;
        V.have_meta = 1;
    }
    return off;
}

uint64_t w_meta_cbor(const bytes *cbor, const bopt *o)
{
    uint64_t off = w_block(1, cbor->p, cbor->len, o);
    if (applies(o))
        V.have_meta = 1; /* the vector sets V.want.meta itself */
    return off;
}

static void define(uint32_t id, const char *name)
{
    for (size_t i = 0; i < V.ndefined; i++)
        if (V.defined[i].id == id) {
            V.defined[i].name = name;
            return;
        }
    if (V.ndefined == sizeof V.defined / sizeof V.defined[0])
        die("too many types");
    V.defined[V.ndefined].id = id;
    V.defined[V.ndefined++].name = name;
}

static void types_cbor(bytes *b, const uint32_t *ids, const char *const *names, size_t n)
{
    cb_array(b, n);
    for (size_t i = 0; i < n; i++) {
        cb_map(b, 2);
        cb_text(b, "id"), cb_uint(b, ids[i]);
        cb_text(b, "name"), cb_text(b, names[i]);
    }
}

uint64_t w_types(const uint32_t *ids, const char *const *names, size_t n, const bopt *o)
{
    bytes b = {0};
    types_cbor(&b, ids, names, n);
    uint64_t off = w_block(2, b.p, b.len, o);
    b_free(&b);
    if (applies(o))
        for (size_t i = 0; i < n; i++) {
            vec_set_type(&V.want, ids[i], names[i], strlen(names[i]), NULL);
            define(ids[i], names[i]);
        }
    return off;
}

static void status_cbor(bytes *b, const tracelog_log_status *st)
{
    cb_map(b, 6 + (st->types_dropped != 0) + (st->threads_dropped != 0));
    cb_text(b, "events_recorded"), cb_uint(b, st->events_recorded);
    cb_text(b, "events_written"), cb_uint(b, st->events_written);
    cb_text(b, "stream_overruns"), cb_uint(b, st->stream_overruns);
    cb_text(b, "log_overruns"), cb_uint(b, st->log_overruns);
    cb_text(b, "flush_error"), cb_uint(b, (uint64_t)st->flush_error);
    cb_text(b, "log_full"), cb_bool(b, (int)st->log_full);
    if (st->types_dropped)
        cb_text(b, "types_dropped"), cb_uint(b, st->types_dropped);
    if (st->threads_dropped)
        cb_text(b, "threads_dropped"), cb_uint(b, st->threads_dropped);
}

static void keep_status(const tracelog_log_status *st, uint64_t seq)
{
    if (!V.have_status || seq > V.status_seq) {
        V.want.status = *st;
        V.status_seq = seq;
        V.have_status = 1;
    }
}

uint64_t span_at(uint64_t off)
{
    const uint8_t *h = V.file.p + off + 16;
    uint32_t len = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
    return 32 + (((uint64_t)len + 7) & ~7ull);
}

static uint64_t seq_of(const bopt *o) { return o && o->has_seq ? o->seq : V.next_seq; }

uint64_t w_status(const tracelog_log_status *st, const bopt *o)
{
    bytes b = {0};
    status_cbor(&b, st);
    uint64_t seq = seq_of(o);
    uint64_t off = w_block(4, b.p, b.len, o);
    b_free(&b);
    if (applies(o))
        keep_status(st, seq);
    return off;
}

/* ---- chunks ------------------------------------------------------------------ */

static void varint(bytes *b, uint64_t v)
{
    while (v >= 0x80) {
        b_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    b_u8(b, (uint8_t)v);
}

static uint64_t zigzag(uint64_t delta) { return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63); }

void chunk_events(chunk *c, const tracelog_event *ev, size_t n)
{
    memset(c, 0, sizeof *c);
    c->count = (uint32_t)n;
    c->min_ts = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        c->min_ts = ev[i].timestamp_ns < c->min_ts ? ev[i].timestamp_ns : c->min_ts;
        c->max_ts = ev[i].timestamp_ns > c->max_ts ? ev[i].timestamp_ns : c->max_ts;
    }
    uint64_t ts = c->min_ts, tid = 0, addr = 0;
    uint32_t pid = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t f = (uint8_t)(ev[i].truncation << 3);
        varint(&c->col[0], zigzag(ev[i].timestamp_ns - ts));
        ts = ev[i].timestamp_ns;
        varint(&c->col[1], ev[i].event_id);
        if (ev[i].pid != pid) {
            f |= 1;
            varint(&c->col[2], pid = ev[i].pid);
        }
        if (ev[i].tid != tid) {
            f |= 2;
            varint(&c->col[3], tid = ev[i].tid);
        }
        if (ev[i].address != addr) {
            f |= 4;
            varint(&c->col[4], zigzag(ev[i].address - addr));
            addr = ev[i].address;
        }
        varint(&c->col[5], ev[i].payload_len);
        b_put(&c->data, ev[i].payload, ev[i].payload_len);
        b_u8(&c->flags, f);
    }
}

void chunk_free(chunk *c)
{
    b_free(&c->flags);
    b_free(&c->data);
    for (int i = 0; i < 6; i++)
        b_free(&c->col[i]);
}

static void chunk_body(const chunk *c, bytes *body)
{
    for (int i = 0; i < 6; i++)
        b_u32(body, (uint32_t)c->col[i].len);
    b_put(body, c->flags.p, c->flags.len);
    for (int i = 0; i < 6; i++)
        b_put(body, c->col[i].p, c->col[i].len);
    b_put(body, c->data.p, c->data.len);
}

void chunk_payload(const chunk *c, bytes *payload)
{
    bytes body = {0};
    chunk_body(c, &body);
    b_u64(payload, c->min_ts);
    b_u64(payload, c->max_ts);
    b_u32(payload, c->count);
    b_u32(payload, c->has_raw_size ? c->raw_size : (uint32_t)body.len);
    b_u8(payload, c->codec);
    b_put(payload, c->reserved, 7);
    if (c->codec == 1)
        zstd_frame(payload, body.p, body.len, c->zstd_checksum, c->zstd_no_size, c->zstd_extra_frame);
    else
        b_put(payload, body.p, body.len);
    b_free(&body);
}

uint64_t w_payload(const bytes *payload, const tracelog_event *ev, long deliver, const bopt *o)
{
    uint64_t seq = seq_of(o);
    uint64_t off = w_block(3, payload->p, payload->len, o);
    if (!o || !o->bad_header_crc) {
        if (V.nindex == sizeof V.index / sizeof V.index[0])
            die("too many chunks");
        const uint8_t *h = payload->p;
        uint64_t min = 0, max = 0;
        for (int i = 7; i >= 0; i--) {
            min = min << 8 | h[i];
            max = max << 8 | h[8 + i];
        }
        V.index[V.nindex].offset = off;
        V.index[V.nindex].seq = seq;
        V.index[V.nindex].min_ts = min;
        V.index[V.nindex].max_ts = max;
        V.index[V.nindex++].count = (uint32_t)h[16] | (uint32_t)h[17] << 8 | (uint32_t)h[18] << 16 |
                                    (uint32_t)h[19] << 24;
    }
    if (applies(o))
        for (long i = 0; i < deliver; i++)
            expect_event(&ev[i]);
    return off;
}

uint64_t w_chunk(chunk *c, const tracelog_event *ev, long deliver, const bopt *o)
{
    bytes payload = {0};
    chunk_payload(c, &payload);
    uint64_t off = w_payload(&payload, ev, deliver < 0 ? (long)c->count : deliver, o);
    b_free(&payload);
    return off;
}

/* Keys of a keyed body: the distinct (id, pid, tid, address, truncation, length), in order of first use. */
static size_t key_of(tracelog_event *keys, size_t *nkeys, const tracelog_event *e)
{
    for (size_t k = 0; k < *nkeys; k++)
        if (keys[k].event_id == e->event_id && keys[k].pid == e->pid && keys[k].tid == e->tid &&
            keys[k].address == e->address && keys[k].truncation == e->truncation &&
            keys[k].payload_len == e->payload_len)
            return k;
    if (*nkeys == 256)
        die("too many keys");
    keys[*nkeys] = *e;
    return (*nkeys)++;
}

void keyed_payload(const tracelog_event *ev, size_t n, bytes *payload)
{
    static tracelog_event keys[256];
    static uint8_t index[256];
    size_t nkeys = 0;
    uint64_t min = UINT64_MAX, max = 0, widest = 0;
    if (n > sizeof index)
        die("too many events");
    for (size_t i = 0; i < n; i++) {
        index[i] = (uint8_t)key_of(keys, &nkeys, &ev[i]);
        min = ev[i].timestamp_ns < min ? ev[i].timestamp_ns : min;
        max = ev[i].timestamp_ns > max ? ev[i].timestamp_ns : max;
    }
    for (size_t i = 0; i < n; i++) { /* the first delta is from min_ts */
        uint64_t z = zigzag(ev[i].timestamp_ns - (i ? ev[i - 1].timestamp_ns : min));
        widest = z > widest ? z : widest;
    }
    unsigned tw = 1;
    while (tw < 8 && widest >> (8 * tw))
        tw++;
    bytes table = {0}, body = {0};
    uint64_t tid = 0, addr = 0;
    for (size_t k = 0; k < nkeys; k++) {
        uint32_t count = 0;
        for (size_t i = 0; i < n; i++)
            count += index[i] == k;
        b_u8(&table, (uint8_t)keys[k].truncation); /* rows: PLANES clear */
        varint(&table, keys[k].event_id);
        varint(&table, keys[k].pid);
        varint(&table, zigzag(keys[k].tid - tid));
        varint(&table, zigzag(keys[k].address - addr));
        varint(&table, keys[k].payload_len);
        varint(&table, count);
        tid = keys[k].tid;
        addr = keys[k].address;
    }
    b_u32(&body, (uint32_t)nkeys);
    b_u32(&body, (uint32_t)table.len);
    b_u8(&body, (uint8_t)tw);
    b_fill(&body, 0, 7);
    b_put(&body, table.p, table.len);
    b_put(&body, index, n);
    for (unsigned b = 0; b < tw; b++)
        for (size_t i = 0; i < n; i++)
            b_u8(&body, (uint8_t)(zigzag(ev[i].timestamp_ns - (i ? ev[i - 1].timestamp_ns : min)) >> (8 * b)));
    for (size_t k = 0; k < nkeys; k++)
        for (size_t i = 0; i < n; i++)
            if (index[i] == k)
                b_put(&body, ev[i].payload, ev[i].payload_len);
    b_u64(payload, min);
    b_u64(payload, max);
    b_u32(payload, (uint32_t)n);
    b_u32(payload, (uint32_t)body.len);
    b_u8(payload, 0);    /* codec: stored */
    b_u8(payload, 1);    /* body_format: keyed */
    b_fill(payload, 0, 6); /* chunk_flags and reserved */
    b_put(payload, body.p, body.len);
    b_free(&table);
    b_free(&body);
}

uint64_t w_events(const tracelog_event *ev, size_t n, const bopt *o)
{
    chunk c;
    chunk_events(&c, ev, n);
    uint64_t off = w_chunk(&c, ev, -1, o);
    chunk_free(&c);
    return off;
}

uint64_t w_trailer(const tracelog_log_status *st, const topt *t, const bopt *o)
{
    static const topt none = {0};
    if (!t)
        t = &none;
    bytes cbor = {0}, p = {0};
    cb_map(&cbor, (uint64_t)!t->no_status + !t->no_types + (t->extra_key != NULL));
    if (!t->no_status) {
        cb_text(&cbor, "status");
        if (t->bad_status)
            cb_text(&cbor, "not a map");
        else
            status_cbor(&cbor, st);
    }
    if (!t->no_types) {
        cb_text(&cbor, "event_types");
        cb_array(&cbor, V.ndefined);
        for (size_t i = 0; i < V.ndefined; i++) {
            cb_map(&cbor, 2);
            cb_text(&cbor, "id"), cb_uint(&cbor, V.defined[i].id);
            cb_text(&cbor, "name"), cb_text(&cbor, V.defined[i].name);
        }
    }
    if (t->extra_key)
        b_put(&cbor, t->extra_key->p, t->extra_key->len);
    if (t->junk_after_map)
        b_u8(&cbor, 0x00);
    int ring = V.layout == 1;
    uint64_t off = o && o->has_at ? o->at : V.file.len;
    size_t n = ring || t->no_index ? 0 : V.nindex;
    b_u32(&p, (uint32_t)cbor.len);
    b_put(&p, cbor.p, cbor.len);
    b_fill(&p, t->pad_byte, (8 - (4 + cbor.len) % 8) % 8);
    b_u64(&p, n + (t->short_count ? 1 : 0));
    for (size_t i = 0; i < n; i++) {
        if (t->garbage_index) {
            b_fill(&p, 0xEE, 40);
            continue;
        }
        b_u64(&p, V.index[i].offset);
        b_u64(&p, V.index[i].seq);
        b_u64(&p, V.index[i].min_ts);
        b_u64(&p, V.index[i].max_ts);
        b_u32(&p, V.index[i].count);
        b_u32(&p, 0);
    }
    b_u64(&p, ring ? 0 : t->garbage_index ? 0xEEEEEEEEEEEEEEEEull : off);
    b_put(&p, t->bad_end_magic ? "\x8BPTLEnd\n" : "\x8BPTLEND\n", 8);
    uint64_t seq = seq_of(o);
    w_block(5, p.p, p.len, o);
    int valid = !t->junk_after_map && !t->bad_end_magic && !t->short_count && !t->bad_status;
    if (applies(o) && valid) {
        if (!t->no_status)
            keep_status(st, seq);
        V.closed = 1;
    }
    b_free(&cbor);
    b_free(&p);
    return off;
}

/* ---- output -------------------------------------------------------------------- */

static const char *out_dir;
static int checking;
static unsigned differences;
static FILE *index_md;
static char **names;
static size_t nnames;

static char *text_of(void (*print)(FILE *, const vec_reading *), const vec_reading *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        die("open_memstream");
    print(f, r);
    fclose(f);
    return buf;
}

/* Writes path, or (checking) compares it with what is there. */
static void emit(const char *suffix, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", out_dir, V.name, suffix);
    if (!checking) {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, len, f) != len || fclose(f))
            die(path);
        return;
    }
    FILE *f = fopen(path, "rb");
    char *have = malloc(len + 1);
    size_t n = f && have ? fread(have, 1, len + 1, f) : 0;
    if (!f || n != len || memcmp(have, data, len)) {
        fprintf(stderr, "gen_vectors: %s differs from what the generator makes\n", path);
        differences++;
    }
    if (f)
        fclose(f);
    free(have);
}

static void print_limits(FILE *f)
{
    const char *sep = "";
    fputc('{', f);
    if (V.max_block_size)
        fprintf(f, "%s\"max_block_size\": %u", sep, V.max_block_size), sep = ", ";
    if (V.max_chunk_size)
        fprintf(f, "%s\"max_chunk_size\": %u", sep, V.max_chunk_size), sep = ", ";
    if (V.max_event_types)
        fprintf(f, "%s\"max_event_types\": %u", sep, V.max_event_types), sep = ", ";
    if (V.max_threads)
        fprintf(f, "%s\"max_threads\": %u", sep, V.max_threads);
    fputs("}\n", f);
}

void vec_end(void)
{
    if (V.want.open) { /* a file that is not read has no events */
        for (size_t i = 0; i < V.want.nevents; i++)
            vec_event_free(&V.want.events[i]);
        V.want.nevents = 0;
    } else {
        if (!V.have_meta)
            expect_problem("NO_METADATA", V.header_size, 0);
        V.want.clean = V.clean_set ? V.clean_value : V.closed && V.want.nproblems == 0;
    }
    size_t elen, rlen;
    char *events = text_of(vec_print_events, &V.want, &elen);
    char *result = text_of(vec_print_result, &V.want, &rlen);
    emit(".ptl", V.file.p, V.file.len);
    emit(".events.jsonl", events, elen);
    emit(".result.json", result, rlen);
    if (V.max_block_size || V.max_chunk_size || V.max_event_types || V.max_threads) {
        char *buf = NULL;
        size_t len;
        FILE *f = open_memstream(&buf, &len);
        print_limits(f);
        fclose(f);
        emit(".limits.json", buf, len);
        free(buf);
    }
    free(events);
    free(result);
    for (size_t i = 0; i < nnames; i++)
        if (strcmp(names[i], V.name) == 0)
            die("two vectors of this name");
    names = realloc(names, (nnames + 1) * sizeof *names);
    names[nnames++] = strdup(V.name);
    fprintf(index_md, "| `%s` | %s |\n", V.name, V.about);
}

void gen_start(const char *dir, int check)
{
    out_dir = dir;
    checking = check;
    index_md = tmpfile();
    if (!index_md)
        die("tmpfile");
}

/* The index of the vectors, and (checking) files no vector makes. Returns the exit status. */
int gen_finish(void)
{
    static const char head[] =
        "# Conformance vectors: index\n\n"
        "Generated by `tests/conformance/gen_vectors` (do not edit; see README.md). One row per vector: the\n"
        "files `NAME.ptl`, `NAME.events.jsonl`, `NAME.result.json` and, for some, `NAME.limits.json`.\n\n"
        "| vector | what it checks |\n|---|---|\n";
    long n = ftell(index_md);
    char *rows = malloc((size_t)n + 1);
    rewind(index_md);
    if (!rows || fread(rows, 1, (size_t)n, index_md) != (size_t)n)
        die("index");
    fclose(index_md);
    char *text = malloc(sizeof head + (size_t)n);
    memcpy(text, head, sizeof head - 1);
    memcpy(text + sizeof head - 1, rows, (size_t)n);
    V.name = "INDEX";
    emit(".md", text, sizeof head - 1 + (size_t)n);
    free(rows);
    free(text);
    if (checking)
        differences += gen_check_extra_files(out_dir, (const char *const *)names, nnames);
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    b_free(&V.file);
    vec_reading_free(&V.want);
    if (checking && differences) {
        fprintf(stderr, "gen_vectors: %u differences: regenerate with gen_vectors %s\n", differences, out_dir);
        return 1;
    }
    printf("gen_vectors: %zu vectors %s %s\n", nnames, checking ? "match" : "written to", out_dir);
    return 0;
}

static int known_file(const char *file, const char *const *vecs, size_t n)
{
    static const char *const suffixes[] = {".ptl", ".events.jsonl", ".result.json", ".limits.json"};
    if (strcmp(file, "README.md") == 0 || strcmp(file, "INDEX.md") == 0)
        return 1;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(vecs[i]);
        if (strncmp(file, vecs[i], k) == 0)
            for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++)
                if (strcmp(file + k, suffixes[s]) == 0)
                    return 1;
    }
    return 0;
}

unsigned gen_check_extra_files(const char *dir, const char *const *vecs, size_t n)
{
    DIR *d = opendir(dir);
    unsigned extra = 0;
    if (!d)
        die(dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || known_file(e->d_name, vecs, n))
            continue;
        fprintf(stderr, "gen_vectors: %s/%s belongs to no vector\n", dir, e->d_name);
        extra++;
    }
    closedir(d);
    return extra;
}
