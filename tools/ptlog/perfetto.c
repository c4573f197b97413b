/*
 * Perfetto's own trace format: a protobuf `Trace` of `TracePacket`s (track
 * events), which Perfetto UI and trace_processor open natively, with no JSON
 * size limit. tests/ptlog/perfetto_trace.proto is the subset written here, with
 * Perfetto's field numbers (tools/ptlog/README.md, "Perfetto trace", says what is
 * drawn how):
 *
 *   - one packet sequence (trusted_packet_sequence_id 1) whose first packet
 *     clears the incremental state and holds a clock snapshot: REALTIME (the
 *     log's clock) is the trace's clock, and a sequence-scoped incremental
 *     clock (id 64) that event packets use by default (TracePacketDefaults),
 *     so that a packet holds the time since the previous one (2 or 3 bytes,
 *     not 9); an event older than the previous one gives its absolute
 *     REALTIME timestamp instead;
 *   - a process track per pid (named after the program for the recording
 *     process), a thread track per thread (tracks.c: its kernel tid, or a
 *     small number), named by the log or "pthread 0x...";
 *   - events are instants, "X:begin"/"X:end" pairs slices (tracks.c, as
 *     for Chrome), still-open slices ended at the last timestamp with the
 *     annotation unfinished = true;
 *   - a typed event's fields are debug annotations (numbers as numbers,
 *     enums and flags as their names), an untyped payload the annotation
 *     data (lowercase hex), a cut payload truncation;
 *   - event names, annotation names and short string values are interned
 *     (InternedData, in the packet that first uses them), so that a packet
 *     of a 10 M-event log holds small ids rather than names;
 *   - losses: the OVERFLOW and RESUME events set a counter track "overflow"
 *     of their process to 1 and 0; overruns the log's status counts are a
 *     counter track "overruns" (0 at the first event, the count at the last).
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "pb.h"
#include "ptlog.h"

/* Field numbers (Perfetto's protos/perfetto/trace/...). */
enum {
    TRACE_PACKET = 1,                 /* Trace.packet */
    PKT_CLOCK_SNAPSHOT = 6,           /* TracePacket */
    PKT_TIMESTAMP = 8,
    PKT_SEQUENCE_ID = 10,             /* trusted_packet_sequence_id */
    PKT_TRACK_EVENT = 11,
    PKT_INTERNED_DATA = 12,
    PKT_SEQUENCE_FLAGS = 13,
    PKT_TIMESTAMP_CLOCK_ID = 58,
    PKT_DEFAULTS = 59,
    PKT_TRACK_DESCRIPTOR = 60,
    DEFAULTS_TIMESTAMP_CLOCK_ID = 58, /* TracePacketDefaults */
    SNAPSHOT_CLOCKS = 1,              /* ClockSnapshot */
    SNAPSHOT_PRIMARY_CLOCK = 2,
    CLOCK_ID = 1,                     /* ClockSnapshot.Clock */
    CLOCK_TIMESTAMP = 2,
    CLOCK_IS_INCREMENTAL = 3,
    TD_UUID = 1,                      /* TrackDescriptor */
    TD_NAME = 2,
    TD_PROCESS = 3,
    TD_THREAD = 4,
    TD_PARENT_UUID = 5,
    TD_COUNTER = 8,
    PD_PID = 1,                       /* ProcessDescriptor */
    PD_CMDLINE = 2,
    PD_PROCESS_NAME = 6,
    THD_PID = 1,                      /* ThreadDescriptor */
    THD_TID = 2,
    THD_THREAD_NAME = 5,
    CD_UNIT = 3,                      /* CounterDescriptor */
    TE_DEBUG_ANNOTATIONS = 4,         /* TrackEvent */
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_TRACK_UUID = 11,
    TE_COUNTER_VALUE = 30,
    DA_NAME_IID = 1,                  /* DebugAnnotation */
    DA_BOOL = 2,
    DA_UINT = 3,
    DA_INT = 4,
    DA_DOUBLE = 5,
    DA_STRING = 6,
    DA_POINTER = 7,
    DA_STRING_IID = 17,
    ID_EVENT_NAMES = 2,               /* InternedData */
    ID_ANNOTATION_NAMES = 3,
    ID_STRING_VALUES = 29,
    INTERNED_IID = 1,                 /* EventName, DebugAnnotationName, InternedString */
    INTERNED_NAME = 2
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { PF_CLOCK_REALTIME = 1, PF_CLOCK_BOOTTIME = 6, PF_CLOCK_INCREMENTAL = 64 };
enum { UNIT_COUNT = 2 };

#define SEQUENCE_ID 1
#define VALUE_INTERN_MAX 65536 /* string values interned; the others are written in full */
#define VALUE_INTERN_LEN 64    /* longer values are written in full */
#define NAME_INTERN_MAX 131072 /* event and field names interned (a log names at most 65,536 types) */

/* ---- interning: a string -> iid table per kind ------------------------------------- */

#define ADDR_SLOTS 64
typedef struct intern_table {
    ptlog_idmap ids;    /* hash of the string -> index in strs */
    char **strs;
    size_t n, cap, max;
    /* The iids of strings that stay put (a schema's field names, a .ptl reader's type names), by address:
       found again without hashing and comparing their bytes. */
    struct {
        const char *s;
        size_t n;
        int64_t iid;
    } by_addr[ADDR_SLOTS];
} intern_table;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/*
 * The iid of s[0..n) (1, 2, ...), *fresh set when it is new (the packet must
 * then carry it); 0 when it is not interned (the table is full, or another
 * string has its hash): the caller writes it in full. -1 out of memory.
 */
static int64_t intern(intern_table *t, const char *s, size_t n, int *fresh)
{
    uint64_t h = hash_bytes(s, n);
    size_t i = ptlog_idmap_get(&t->ids, h);
    *fresh = 0;
    if (i != SIZE_MAX)
        return strlen(t->strs[i]) == n && memcmp(t->strs[i], s, n) == 0 ? (int64_t)i + 1 : 0;
    if (t->n == t->max)
        return 0;
    char **v = tl_grow(t->strs, &t->cap, t->n + 1, sizeof *v);
    if (!v)
        return -1;
    t->strs = v;
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = 0;
    if (ptlog_idmap_put(&t->ids, h, t->n)) {
        free(copy);
        return -1;
    }
    t->strs[t->n++] = copy;
    *fresh = 1;
    return (int64_t)t->n;
}

static void intern_free(intern_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    ptlog_idmap_free(&t->ids);
}

/* ---- the writer --------------------------------------------------------------------- */

typedef struct pf_writer {
    ptlog_out *out;
    ptlog_src *src;
    ptlog_tracks tracks;
    pb_buf pkt, event, interned; /* the packet being made, its TrackEvent and InternedData */
    intern_table names, annotation_names, values;
    char *text;                  /* UTF-8 copies of texts from the log */
    size_t text_cap;
    int started;
    uint64_t first_ts, last_ts, clock; /* clock: the incremental clock's value */
    ptlog_idmap overflow_tracks; /* pid -> uuid of its "overflow" counter track */
    const tracelog_event *creating; /* the event whose process and thread are being looked up */
    ptlog_plans plans;              /* typed events' schemas, resolved once */
} pf_writer;

/*
 * s[0..n) as valid UTF-8 (protobuf strings must be; names in a .ptl are
 * bytes): invalid bytes become U+FFFD. Points into w->text, or at s when it
 * is valid; NULL out of memory.
 */
static const char *utf8_text(pf_writer *w, const char *s, size_t n, size_t *len)
{
    size_t i = 0;
    while (i < n && ptlog_utf8_len((const unsigned char *)s + i, n - i))
        i += ptlog_utf8_len((const unsigned char *)s + i, n - i);
    *len = n;
    if (i == n)
        return s;
    if (w->text_cap < 3 * n) {
        char *t = realloc(w->text, 3 * n);
        if (!t)
            return NULL;
        w->text = t;
        w->text_cap = 3 * n;
    }
    size_t o = 0;
    for (i = 0; i < n;) {
        size_t k = ptlog_utf8_len((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(w->text + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(w->text + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    *len = o;
    return w->text;
}

/* Writes the packet made in w->pkt as Trace.packet; 0, or an exit code (out of memory). */
static int emit(pf_writer *w)
{
    if (pb_failed(&w->pkt))
        return ptlog_nomem();
    unsigned char head[11];
    head[0] = TRACE_PACKET << 3 | PB_LEN;
    size_t k = 1 + pb_varint_put(head + 1, w->pkt.len);
    ptlog_out_write(w->out, head, k);
    ptlog_out_write(w->out, w->pkt.p, w->pkt.len);
    pb_reset(&w->pkt);
    return 0;
}

/* Starts a packet of the sequence. */
static void packet(pf_writer *w, uint32_t flags)
{
    pb_reset(&w->pkt);
    pb_uint(&w->pkt, PKT_SEQUENCE_ID, SEQUENCE_ID);
    if (flags)
        pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS, flags);
}

static void put_clock(pb_buf *b, uint32_t id, uint64_t ts, int incremental)
{
    size_t m = pb_begin(b, SNAPSHOT_CLOCKS);
    pb_uint(b, CLOCK_ID, id);
    pb_uint(b, CLOCK_TIMESTAMP, ts);
    if (incremental)
        pb_uint(b, CLOCK_IS_INCREMENTAL, 1);
    pb_end(b, m);
}

/* The sequence's first packets: the incremental state cleared, the clocks, the defaults. */
static int start(pf_writer *w, uint64_t ts)
{
    w->started = 1;
    w->first_ts = w->last_ts = w->clock = ts;
    packet(w, SEQ_INCREMENTAL_STATE_CLEARED);
    size_t m = pb_begin(&w->pkt, PKT_CLOCK_SNAPSHOT);
    put_clock(&w->pkt, PF_CLOCK_REALTIME, ts, 0);
    put_clock(&w->pkt, PF_CLOCK_BOOTTIME, ts, 0); /* the default clock of packets that name none */
    put_clock(&w->pkt, PF_CLOCK_INCREMENTAL, ts, 1);
    pb_uint(&w->pkt, SNAPSHOT_PRIMARY_CLOCK, PF_CLOCK_REALTIME);
    pb_end(&w->pkt, m);
    int rc = emit(w);
    if (rc)
        return rc;
    packet(w, SEQ_NEEDS_INCREMENTAL_STATE);
    m = pb_begin(&w->pkt, PKT_DEFAULTS);
    pb_uint(&w->pkt, DEFAULTS_TIMESTAMP_CLOCK_ID, PF_CLOCK_INCREMENTAL);
    pb_end(&w->pkt, m);
    return emit(w);
}

/* A text field from the log, made valid UTF-8. 0 or -1 (out of memory). */
static int put_text(pf_writer *w, pb_buf *b, uint32_t field, const char *s, size_t n)
{
    size_t len;
    const char *t = utf8_text(w, s, n, &len);
    if (!t)
        return -1;
    pb_bytes(b, field, t, len);
    return 0;
}

static int process_descriptor(pf_writer *w, const ptlog_track_process *p)
{
    const tracelog_metadata *m = &w->src->meta;
    const char *prog = strrchr(m->program, '/');
    prog = prog ? prog + 1 : m->program;
    char name[TRACELOG_TEXT_MAX + 16];
    int recorder = p->pid == m->pid && *prog;
    if (recorder)
        snprintf(name, sizeof name, "%s", prog);
    else
        snprintf(name, sizeof name, "pid %u", p->pid);
    packet(w, 0);
    size_t td = pb_begin(&w->pkt, PKT_TRACK_DESCRIPTOR);
    pb_uint(&w->pkt, TD_UUID, p->serial);
    size_t pd = pb_begin(&w->pkt, TD_PROCESS);
    pb_int(&w->pkt, PD_PID, (int32_t)p->out_pid);
    if (put_text(w, &w->pkt, PD_PROCESS_NAME, name, strlen(name)) ||
        (recorder && put_text(w, &w->pkt, PD_CMDLINE, m->program, strlen(m->program))))
        return ptlog_nomem();
    pb_end(&w->pkt, pd);
    pb_end(&w->pkt, td);
    return emit(w);
}

static int thread_descriptor(pf_writer *w, const ptlog_track_process *p, const ptlog_track_thread *t,
                             const char *log_name)
{
    char name[64];
    if (!log_name) {
        snprintf(name, sizeof name, "pthread 0x%llx", (unsigned long long)t->pthread);
        log_name = name;
    }
    packet(w, 0);
    size_t td = pb_begin(&w->pkt, PKT_TRACK_DESCRIPTOR);
    pb_uint(&w->pkt, TD_UUID, t->serial);
    pb_uint(&w->pkt, TD_PARENT_UUID, p->serial);
    size_t thd = pb_begin(&w->pkt, TD_THREAD);
    pb_int(&w->pkt, THD_PID, (int32_t)p->out_pid);
    pb_int(&w->pkt, THD_TID, t->tid);
    if (put_text(w, &w->pkt, THD_THREAD_NAME, log_name, strlen(log_name)))
        return ptlog_nomem();
    pb_end(&w->pkt, thd);
    pb_end(&w->pkt, td);
    return emit(w);
}

static int on_new_track(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t)
{
    pf_writer *w = ctx;
    if (!t)
        return process_descriptor(w, p);
    /* The thread's name in the log, where the source knows it (the event being written made the thread). */
    const char *name = w->src->thread_name && w->creating ? w->src->thread_name(w->src, w->creating) : NULL;
    return thread_descriptor(w, p, t, name);
}

static uint64_t counter_track(pf_writer *w, uint32_t parent, const char *name, int *rc)
{
    uint64_t uuid = ++w->tracks.serials;
    packet(w, 0);
    size_t td = pb_begin(&w->pkt, PKT_TRACK_DESCRIPTOR);
    pb_uint(&w->pkt, TD_UUID, uuid);
    if (parent)
        pb_uint(&w->pkt, TD_PARENT_UUID, parent);
    pb_string(&w->pkt, TD_NAME, name);
    size_t cd = pb_begin(&w->pkt, TD_COUNTER);
    pb_uint(&w->pkt, CD_UNIT, UNIT_COUNT);
    pb_end(&w->pkt, cd);
    pb_end(&w->pkt, td);
    *rc = emit(w);
    return uuid;
}

/* The packet's timestamp: on the incremental clock when ts is not older than the last, else absolute. */
static void put_timestamp(pf_writer *w, uint64_t ts)
{
    if (ts >= w->clock) {
        pb_uint(&w->pkt, PKT_TIMESTAMP, ts - w->clock);
        w->clock = ts;
    } else {
        pb_uint(&w->pkt, PKT_TIMESTAMP, ts);
        pb_uint(&w->pkt, PKT_TIMESTAMP_CLOCK_ID, PF_CLOCK_REALTIME);
    }
    if (ts > w->last_ts)
        w->last_ts = ts;
}

/* Adds entry {iid, name} to the packet's InternedData field `field`. */
static int add_interned(pf_writer *w, uint32_t field, int64_t iid, const char *s, size_t n)
{
    size_t m = pb_begin(&w->interned, field);
    pb_uint(&w->interned, INTERNED_IID, (uint64_t)iid);
    if (put_text(w, &w->interned, INTERNED_NAME, s, n))
        return -1;
    pb_end(&w->interned, m);
    return 0;
}

/* The iid of a name in table t (interned data field `field`), 0 if written in full; -1 out of memory. */
static int64_t iid_of(pf_writer *w, intern_table *t, uint32_t field, const char *s, size_t n)
{
    int fresh;
    int64_t iid = intern(t, s, n, &fresh);
    if (iid > 0 && fresh && add_interned(w, field, iid, s, n))
        return -1;
    return iid;
}

/* iid_of for a string that stays where it is until the source is closed. */
static int64_t iid_of_fixed(pf_writer *w, intern_table *t, uint32_t field, const char *s, size_t n)
{
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
    size_t k = (size_t)(h >> 32) % ADDR_SLOTS;
    if (t->by_addr[k].s == s && t->by_addr[k].n == n)
        return t->by_addr[k].iid;
    int64_t iid = iid_of(w, t, field, s, n);
    if (iid > 0) {
        t->by_addr[k].s = s;
        t->by_addr[k].n = n;
        t->by_addr[k].iid = iid;
    }
    return iid;
}

/* The annotation's name: interned (every annotation name is: few, and repeated). Each is a schema's
   field name or a literal, which stay put (type_schema: borrowed until close). */
static int annotation_name(pf_writer *w, const char *name, size_t n)
{
    int64_t iid = iid_of_fixed(w, &w->annotation_names, ID_ANNOTATION_NAMES, name, n);
    if (iid < 0)
        return -1;
    if (iid)
        pb_uint(&w->event, DA_NAME_IID, (uint64_t)iid);
    else
        pb_bytes(&w->event, 10 /* DebugAnnotation.name */, name, n);
    return 0;
}

/* A string annotation value: interned when short (enum names, flags, short texts), else in full. */
static int string_value(pf_writer *w, const char *s, size_t n)
{
    int64_t iid = n <= VALUE_INTERN_LEN ? iid_of(w, &w->values, ID_STRING_VALUES, s, n) : 0;
    if (iid < 0)
        return -1;
    if (iid)
        pb_uint(&w->event, DA_STRING_IID, (uint64_t)iid);
    else if (put_text(w, &w->event, DA_STRING, s, n))
        return -1;
    return 0;
}

static void field_text(void *ctx, const char *s, size_t n)
{
    pf_writer *w = ctx;
    if (string_value(w, s, n))
        w->event.failed = 1;
}

/*
 * Field i's value, by its type (JSON's rules, README.md "JSON schema", with
 * protobuf's types): numbers straight from the payload through its plan fp.
 */
static int field_value(pf_writer *w, const ptlog_field_plan *fp, const tracelog_fields *f, size_t i)
{
    const uint8_t *p = f->data + fp->offset;
    const char *text;
    size_t n;
    switch (fp->type) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
        pb_uint(&w->event, DA_UINT, ptlog_plan_load(fp, p));
        return 0;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        pb_int(&w->event, DA_INT, (int64_t)ptlog_plan_load(fp, p)); /* sign-extended */
        return 0;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        pb_double(&w->event, DA_DOUBLE, ptlog_load_float(p, fp->size));
        return 0;
    case TRACELOG_FIELD_BOOL:
        pb_uint(&w->event, DA_BOOL, ptlog_plan_load(fp, p) != 0);
        return 0;
    case TRACELOG_FIELD_PTR:
        pb_uint(&w->event, DA_POINTER, ptlog_plan_load(fp, p));
        return 0;
    case TRACELOG_FIELD_CHAR:
        tracelog_fields_string(f, i, &text, &n);
        return string_value(w, text, n);
    default: /* enum, flags, event set, bytes: their text, as dump shows it */
        return ptlog_field_text(f, i, field_text, w) || pb_failed(&w->event) ? -1 : 0;
    }
}

static int annotation_field(pf_writer *w, const ptlog_plan *plan, const tracelog_fields *f, size_t i)
{
    const ptlog_field_plan *fp = &plan->f[i];
    size_t m = pb_begin(&w->event, TE_DEBUG_ANNOTATIONS);
    if (annotation_name(w, fp->name, fp->name_len) || field_value(w, fp, f, i))
        return -1;
    pb_end(&w->event, m);
    return 0;
}

static int annotation_uint(pf_writer *w, const char *name, uint64_t v)
{
    size_t m = pb_begin(&w->event, TE_DEBUG_ANNOTATIONS);
    if (annotation_name(w, name, strlen(name)))
        return -1;
    pb_uint(&w->event, DA_UINT, v);
    pb_end(&w->event, m);
    return 0;
}

static int annotation_string(pf_writer *w, const char *name, const char *s, size_t n)
{
    size_t m = pb_begin(&w->event, TE_DEBUG_ANNOTATIONS);
    if (annotation_name(w, name, strlen(name)) || string_value(w, s, n))
        return -1;
    pb_end(&w->event, m);
    return 0;
}

/* data (an untyped payload in hex), truncation, the fields of a typed one. */
static int annotations(pf_writer *w, const tracelog_event *ev)
{
    tracelog_fields f;
    int typed = ptlog_event_fields(w->src, ev, &f);
    if (!typed && ev->payload_len) {
        size_t m = pb_begin(&w->event, TE_DEBUG_ANNOTATIONS);
        if (annotation_name(w, "data", 4))
            return -1;
        size_t hex = pb_begin(&w->event, DA_STRING); /* the hex digits written in place */
        unsigned char *d = pb_append(&w->event, 2 * (size_t)ev->payload_len);
        if (d)
            ptlog_fmt_hexbytes(ev->payload, ev->payload_len, (char *)d);
        pb_end(&w->event, hex);
        pb_end(&w->event, m);
    }
    if (ev->truncation && annotation_uint(w, "truncation", ev->truncation))
        return -1;
    const ptlog_plan *plan = typed && f.present ? ptlog_plan_of(&w->plans, f.schema) : NULL;
    if (typed && f.present && !plan)
        return -1; /* no memory for the plan */
    for (size_t i = 0; typed && i < f.present; i++)
        if (annotation_field(w, plan, &f, i))
            return -1;
    if (typed && f.size_check)
        return annotation_string(w, "fields_size", f.size_check < 0 ? "short" : "long", f.size_check < 0 ? 5 : 4);
    return 0;
}

/* Puts the TrackEvent made in w->event (and the InternedData it needs) into a packet at ts, and writes it. */
static int emit_event(pf_writer *w, uint64_t ts, int absolute)
{
    if (pb_failed(&w->event) || pb_failed(&w->interned))
        return ptlog_nomem();
    packet(w, SEQ_NEEDS_INCREMENTAL_STATE);
    if (absolute) { /* after the last event: outside the incremental clock */
        pb_uint(&w->pkt, PKT_TIMESTAMP, ts);
        pb_uint(&w->pkt, PKT_TIMESTAMP_CLOCK_ID, PF_CLOCK_REALTIME);
    } else {
        put_timestamp(w, ts);
    }
    if (w->interned.len)
        pb_bytes(&w->pkt, PKT_INTERNED_DATA, w->interned.p, w->interned.len);
    pb_bytes(&w->pkt, PKT_TRACK_EVENT, w->event.p, w->event.len);
    pb_reset(&w->interned);
    pb_reset(&w->event);
    return emit(w);
}

static int counter(pf_writer *w, uint64_t track, uint64_t ts, int64_t value, int absolute)
{
    pb_uint(&w->event, TE_TYPE, TYPE_COUNTER);
    pb_uint(&w->event, TE_TRACK_UUID, track);
    pb_int(&w->event, TE_COUNTER_VALUE, value);
    return emit_event(w, ts, absolute);
}

/* OVERFLOW (1) and RESUME (0) on the "overflow" counter of the event's process (made at its first). */
static int loss_counter(pf_writer *w, const ptlog_track_process *p, const tracelog_event *ev, int value)
{
    int rc = 0;
    size_t track = ptlog_idmap_get(&w->overflow_tracks, p->pid);
    if (track == SIZE_MAX) {
        track = (size_t)counter_track(w, p->serial, "overflow", &rc);
        if (rc)
            return rc;
        if (ptlog_idmap_put(&w->overflow_tracks, p->pid, track))
            return ptlog_nomem();
    }
    return counter(w, track, ev->timestamp_ns, value, 0);
}

static int pf_event(void *ctx, const tracelog_event *ev, const char *name)
{
    pf_writer *w = ctx;
    int rc;
    if (!w->started && (rc = start(w, ev->timestamp_ns)))
        return rc;
    ptlog_track_process *p;
    ptlog_track_thread *t;
    char unknown[32];
    size_t n;
    w->creating = ev;
    int ph = ptlog_tracks_place(&w->tracks, ev, &name, unknown, &n, &p, &t);
    w->creating = NULL;
    if (ph < 0) /* the descriptors' only failure is out of memory too */
        return ptlog_tracks_error(&w->tracks);
    pb_uint(&w->event, TE_TYPE, ph == 'B' ? TYPE_SLICE_BEGIN : ph == 'E' ? TYPE_SLICE_END : TYPE_INSTANT);
    pb_uint(&w->event, TE_TRACK_UUID, t->serial);
    if (ph != 'E') {
        int fixed = name != unknown && w->src->type_names_stable;
        int64_t iid = fixed ? iid_of_fixed(w, &w->names, ID_EVENT_NAMES, name, n) : iid_of(w, &w->names, ID_EVENT_NAMES, name, n);
        if (iid < 0)
            return ptlog_nomem();
        if (iid)
            pb_uint(&w->event, TE_NAME_IID, (uint64_t)iid);
        else if (put_text(w, &w->event, 23 /* TrackEvent.name */, name, n))
            return ptlog_nomem();
    }
    if (annotations(w, ev))
        return ptlog_nomem();
    if ((rc = emit_event(w, ev->timestamp_ns, 0)))
        return rc;
    /* By name, as --no-system tells system events: a JSON input or a native log has its own ids. An
       instant's n is its name's length (a slice's name ends in begin or end). */
    int overflow = ph == 'i' && n == 20 && memcmp(name, "posix_trace_overflow", 20) == 0;
    if (overflow || (ph == 'i' && n == 18 && memcmp(name, "posix_trace_resume", 18) == 0))
        return loss_counter(w, p, ev, overflow);
    return 0;
}

static void close_slice(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t, const char *name,
                        size_t n)
{
    pf_writer *w = ctx;
    (void)p, (void)name, (void)n;
    pb_uint(&w->event, TE_TYPE, TYPE_SLICE_END);
    pb_uint(&w->event, TE_TRACK_UUID, t->serial);
    size_t m = pb_begin(&w->event, TE_DEBUG_ANNOTATIONS);
    if (annotation_name(w, "unfinished", 10))
        w->event.failed = 1;
    pb_uint(&w->event, DA_BOOL, 1);
    pb_end(&w->event, m);
    if (emit_event(w, w->last_ts, 0))
        w->pkt.failed = 1;
}

/* The status's overruns as a counter of the recording process: 0 at the first event, the count at the last. */
static int overruns(pf_writer *w)
{
    tracelog_log_status st;
    w->src->get_status(w->src, &st);
    uint64_t lost = st.stream_overruns + st.log_overruns;
    if (!lost || !w->started)
        return 0;
    size_t i = ptlog_idmap_get(&w->tracks.process_index, w->src->meta.pid);
    uint32_t parent = i != SIZE_MAX ? w->tracks.processes[i].serial : 0;
    int rc = 0;
    uint64_t track = counter_track(w, parent, "overruns", &rc);
    if (rc || (rc = counter(w, track, w->first_ts, 0, 1)))
        return rc;
    return counter(w, track, w->last_ts, lost > INT64_MAX ? INT64_MAX : (int64_t)lost, 1);
}

int ptlog_write_perfetto(ptlog_src *src, ptlog_out *out, ptlog_select *sel)
{
    pf_writer *w = calloc(1, sizeof *w);
    if (!w)
        return ptlog_nomem();
    w->out = out;
    w->src = src;
    w->values.max = VALUE_INTERN_MAX;
    /* Names too: an event of an unnamed id is named event#ID, and a log may hold millions of ids. */
    w->names.max = w->annotation_names.max = NAME_INTERN_MAX;
    ptlog_tracks_init(&w->tracks, src, on_new_track, w);
    int rc = ptlog_src_events(src, sel, pf_event, w);
    if (rc <= PTLOG_EXIT_LOSS) {
        ptlog_tracks_close_open(&w->tracks, close_slice, w);
        int orc = pb_failed(&w->pkt) ? ptlog_nomem() : overruns(w);
        if (orc)
            rc = orc;
    }
    ptlog_tracks_free(&w->tracks);
    ptlog_idmap_free(&w->overflow_tracks);
    intern_free(&w->names);
    intern_free(&w->annotation_names);
    intern_free(&w->values);
    ptlog_plans_free(&w->plans);
    pb_free(&w->pkt);
    pb_free(&w->event);
    pb_free(&w->interned);
    free(w->text);
    free(w);
    return rc;
}
