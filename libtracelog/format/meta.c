/* METADATA and STATUS payloads, and the policy names they use. */
#include "format/meta.h"

#include <string.h>

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)
#define PUT(expr) do { if (expr) return TRACELOG_E_NOMEM; } while (0)

const char *tracelog_policy_name(tracelog_policy p)
{
    switch (p) {
    case TRACELOG_POLICY_LOOP: return "loop";
    case TRACELOG_POLICY_UNTIL_FULL: return "until_full";
    case TRACELOG_POLICY_FLUSH: return "flush";
    case TRACELOG_POLICY_APPEND: return "append";
    }
    return NULL;
}

static const tracelog_policy all_policies[] = {TRACELOG_POLICY_LOOP, TRACELOG_POLICY_UNTIL_FULL,
                                               TRACELOG_POLICY_FLUSH, TRACELOG_POLICY_APPEND};

tracelog_status tracelog_policy_parse(const char *name, tracelog_policy *policy)
{
    if (!name || !policy)
        return TRACELOG_E_INVAL;
    for (size_t i = 0; i < sizeof all_policies / sizeof *all_policies; i++)
        if (strcmp(name, tracelog_policy_name(all_policies[i])) == 0) {
            *policy = all_policies[i];
            return TRACELOG_OK;
        }
    return TRACELOG_E_INVAL;
}

static int policy_from(const tl_cbor_item *it, tracelog_policy *out)
{
    for (size_t i = 0; i < sizeof all_policies / sizeof *all_policies; i++)
        if (tl_cbor_is_key(it, tracelog_policy_name(all_policies[i]))) {
            *out = all_policies[i];
            return 0;
        }
    return -1;
}

static int put_kv_text(tl_buf *b, const char *k, const char *v)
{
    return tl_cbor_put_text(b, k) || tl_cbor_put_text(b, v);
}

static int put_kv_uint(tl_buf *b, const char *k, uint64_t v)
{
    return tl_cbor_put_text(b, k) || tl_cbor_put_uint(b, v);
}

tracelog_status tl_meta_encode(const tracelog_metadata *m, tl_buf *out)
{
    const char *sp = tracelog_policy_name(m->stream_full_policy);
    const char *lp = tracelog_policy_name(m->log_full_policy);
    if (!sp || !lp || m->stream_full_policy == TRACELOG_POLICY_APPEND ||
        m->log_full_policy == TRACELOG_POLICY_FLUSH)
        return TRACELOG_E_INVAL;
    int calibrated = m->clock_mult != 0;
    if (m->clock_shift > 63)
        return TRACELOG_E_INVAL;
    PUT(tl_cbor_put_map(out, 14 + (uint64_t)calibrated));
    PUT(put_kv_text(out, "trace_name", m->trace_name));
    PUT(put_kv_text(out, "generation_version", m->generation_version));
    PUT(put_kv_uint(out, "creation_time_ns", m->creation_time_ns));
    PUT(put_kv_text(out, "clock_id", m->clock_id));
    PUT(put_kv_text(out, "clock_source", m->clock_source));
    PUT(put_kv_uint(out, "clock_resolution_ns", m->clock_resolution_ns));
    PUT(put_kv_uint(out, "max_data_size", m->max_data_size));
    PUT(put_kv_uint(out, "stream_min_size", m->stream_min_size));
    PUT(put_kv_uint(out, "log_max_size", m->log_max_size));
    PUT(put_kv_text(out, "stream_full_policy", sp));
    PUT(put_kv_text(out, "log_full_policy", lp));
    PUT(put_kv_text(out, "inheritance", m->inherited ? "inherited" : "close_for_child"));
    PUT(tl_cbor_put_text(out, "host") || tl_cbor_put_map(out, 4));
    PUT(put_kv_text(out, "hostname", m->hostname));
    PUT(put_kv_text(out, "os_name", m->os_name));
    PUT(put_kv_text(out, "os_release", m->os_release));
    PUT(put_kv_text(out, "machine", m->machine));
    PUT(tl_cbor_put_text(out, "process") || tl_cbor_put_map(out, 2));
    PUT(put_kv_uint(out, "pid", m->pid));
    PUT(put_kv_text(out, "program", m->program));
    if (calibrated) {
        PUT(tl_cbor_put_text(out, "clock_calibration") || tl_cbor_put_map(out, 4));
        PUT(put_kv_uint(out, "tsc_base", m->clock_tsc_base));
        PUT(put_kv_uint(out, "ns_base", m->clock_ns_base));
        PUT(put_kv_uint(out, "mult", m->clock_mult));
        PUT(put_kv_uint(out, "shift", m->clock_shift));
    }
    return TRACELOG_OK;
}

/* The clock_calibration map (format 1.1): four unsigned integers, shift at most 63, mult not 0. */
static tracelog_status decode_calibration(tl_cbor_in *in, uint64_t pairs, tracelog_metadata *m, const char **why)
{
    static const char *const keys[] = {"tsc_base", "ns_base", "mult", "shift"};
    uint64_t v[4] = {0}, seen = 0;
    for (uint64_t i = 0; i < pairs; i++) {
        tl_cbor_item k, val;
        if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &val))
            CORRUPT("metadata: bad clock_calibration entry");
        int f = 0;
        while (f < 4 && !tl_cbor_is_key(&k, keys[f]))
            f++;
        if (f == 4) {
            if (tl_cbor_skip(in, &val))
                CORRUPT("metadata: bad value");
            continue;
        }
        if (val.kind != TL_CBOR_UINT)
            CORRUPT("metadata: bad clock_calibration value");
        v[f] = val.u;
        seen |= 1u << f;
    }
    if (seen != 15 || v[2] == 0 || v[3] > 63)
        CORRUPT("metadata: incomplete clock_calibration");
    m->clock_tsc_base = v[0];
    m->clock_ns_base = v[1];
    m->clock_mult = v[2];
    m->clock_shift = (uint32_t)v[3];
    return TRACELOG_OK;
}

/* Copies a text item into a fixed field; fails if it does not fit or holds a NUL. */
static int copy_text(const tl_cbor_item *it, char *dst, size_t cap)
{
    if (it->kind != TL_CBOR_TEXT || it->len >= cap || memchr(it->ptr, 0, it->len))
        return -1;
    memcpy(dst, it->ptr, it->len);
    dst[it->len] = 0;
    return 0;
}

/* The three maps of METADATA: each key is known in its own map only (a key of another map is unknown there). */
enum meta_map { TOP_MAP, HOST_MAP, PROCESS_MAP };

struct text_field { enum meta_map map; const char *key; size_t off, cap; };
struct uint_field { const char *key; size_t off; };

#define TF(map, k, field) {map, k, offsetof(tracelog_metadata, field), sizeof(((tracelog_metadata *)0)->field)}
#define UF(k, field) {k, offsetof(tracelog_metadata, field)}

static const struct text_field text_fields[] = {
    TF(TOP_MAP, "trace_name", trace_name), TF(TOP_MAP, "generation_version", generation_version),
    TF(TOP_MAP, "clock_id", clock_id), TF(TOP_MAP, "clock_source", clock_source),
    TF(HOST_MAP, "hostname", hostname), TF(HOST_MAP, "os_name", os_name),
    TF(HOST_MAP, "os_release", os_release), TF(HOST_MAP, "machine", machine),
    TF(PROCESS_MAP, "program", program),
};
static const struct uint_field uint_fields[] = { /* all in the top-level map */
    UF("creation_time_ns", creation_time_ns), UF("clock_resolution_ns", clock_resolution_ns),
    UF("max_data_size", max_data_size), UF("stream_min_size", stream_min_size),
    UF("log_max_size", log_max_size),
};

/* A key of the top-level map other than its text and integer fields; *known = 0 if k is none. */
static tracelog_status decode_top_key(tl_cbor_in *in, const tl_cbor_item *k, const tl_cbor_item *v,
                                      tracelog_metadata *m, const char **why, int *known);

/* Decodes the pairs of one map into m; the "host" and "process" maps recurse once. */
static tracelog_status decode_map(tl_cbor_in *in, uint64_t pairs, tracelog_metadata *m, enum meta_map map,
                                  const char **why)
{
    for (uint64_t i = 0; i < pairs; i++) {
        tl_cbor_item k, v;
        if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &v))
            CORRUPT("metadata: bad map entry");
        int known = 0;
        for (size_t f = 0; f < sizeof text_fields / sizeof *text_fields && !known; f++)
            if (text_fields[f].map == map && tl_cbor_is_key(&k, text_fields[f].key)) {
                if (copy_text(&v, (char *)m + text_fields[f].off, text_fields[f].cap))
                    CORRUPT("metadata: bad text value");
                known = 1;
            }
        for (size_t f = 0; f < sizeof uint_fields / sizeof *uint_fields && !known && map == TOP_MAP; f++)
            if (tl_cbor_is_key(&k, uint_fields[f].key)) {
                if (v.kind != TL_CBOR_UINT)
                    CORRUPT("metadata: bad integer value");
                memcpy((char *)m + uint_fields[f].off, &v.u, sizeof v.u);
                known = 1;
            }
        if (!known && map == PROCESS_MAP && tl_cbor_is_key(&k, "pid")) {
            if (v.kind != TL_CBOR_UINT || v.u > UINT32_MAX)
                CORRUPT("metadata: bad pid");
            m->pid = (uint32_t)v.u;
            known = 1;
        }
        if (!known && map == TOP_MAP) {
            tracelog_status st = decode_top_key(in, &k, &v, m, why, &known);
            if (st != TRACELOG_OK)
                return st;
        }
        if (!known && tl_cbor_skip(in, &v))
            CORRUPT("metadata: bad value");
    }
    return TRACELOG_OK;
}

static tracelog_status decode_top_key(tl_cbor_in *in, const tl_cbor_item *k, const tl_cbor_item *v,
                                      tracelog_metadata *m, const char **why, int *known)
{
    *known = 1;
    if (tl_cbor_is_key(k, "stream_full_policy")) {
        if (policy_from(v, &m->stream_full_policy) || m->stream_full_policy == TRACELOG_POLICY_APPEND)
            CORRUPT("metadata: bad stream_full_policy");
    } else if (tl_cbor_is_key(k, "log_full_policy")) {
        if (policy_from(v, &m->log_full_policy) || m->log_full_policy == TRACELOG_POLICY_FLUSH)
            CORRUPT("metadata: bad log_full_policy");
    } else if (tl_cbor_is_key(k, "inheritance")) {
        if (tl_cbor_is_key(v, "inherited"))
            m->inherited = 1;
        else if (tl_cbor_is_key(v, "close_for_child"))
            m->inherited = 0;
        else
            CORRUPT("metadata: bad inheritance");
    } else if (tl_cbor_is_key(k, "clock_calibration")) {
        if (v->kind != TL_CBOR_MAP)
            CORRUPT("metadata: clock_calibration is not a map");
        return decode_calibration(in, v->u, m, why);
    } else if (tl_cbor_is_key(k, "host") || tl_cbor_is_key(k, "process")) {
        if (v->kind != TL_CBOR_MAP)
            CORRUPT("metadata: host/process is not a map");
        return decode_map(in, v->u, m, tl_cbor_is_key(k, "host") ? HOST_MAP : PROCESS_MAP, why);
    } else {
        *known = 0;
    }
    return TRACELOG_OK;
}

tracelog_status tl_meta_decode(const uint8_t *p, size_t len, tracelog_policy default_log_policy,
                               tracelog_metadata *m, const char **why)
{
    tl_cbor_in in = {p, p + len};
    tl_cbor_item top;
    memset(m, 0, sizeof *m);
    m->stream_full_policy = TRACELOG_POLICY_LOOP;
    m->log_full_policy = default_log_policy;
    if (tl_cbor_next(&in, &top) || top.kind != TL_CBOR_MAP)
        CORRUPT("metadata: not a CBOR map");
    tracelog_status st = decode_map(&in, top.u, m, TOP_MAP, why);
    if (st == TRACELOG_OK && in.p != in.end)
        CORRUPT("metadata: bytes after the map");
    return st;
}

tracelog_status tl_status_encode(const tracelog_log_status *st, tl_buf *out)
{
    /* The 1.1 counters are written only when not zero: a log that lost nothing keeps 1.0's STATUS. */
    PUT(tl_cbor_put_map(out, 6 + (st->types_dropped != 0) + (st->threads_dropped != 0)));
    PUT(put_kv_uint(out, "events_recorded", st->events_recorded));
    PUT(put_kv_uint(out, "events_written", st->events_written));
    PUT(put_kv_uint(out, "stream_overruns", st->stream_overruns));
    PUT(put_kv_uint(out, "log_overruns", st->log_overruns));
    PUT(put_kv_uint(out, "flush_error", (uint64_t)(st->flush_error < 0 ? 0 : st->flush_error)));
    PUT(tl_cbor_put_text(out, "log_full") || tl_cbor_put_bool(out, st->log_full));
    if (st->types_dropped)
        PUT(put_kv_uint(out, "types_dropped", st->types_dropped));
    if (st->threads_dropped)
        PUT(put_kv_uint(out, "threads_dropped", st->threads_dropped));
    return TRACELOG_OK;
}

tracelog_status tl_status_decode(tl_cbor_in *in, tracelog_log_status *st, const char **why)
{
    static const struct { const char *key; size_t off; } fields[] = {
        {"events_recorded", offsetof(tracelog_log_status, events_recorded)},
        {"events_written", offsetof(tracelog_log_status, events_written)},
        {"stream_overruns", offsetof(tracelog_log_status, stream_overruns)},
        {"log_overruns", offsetof(tracelog_log_status, log_overruns)},
        {"types_dropped", offsetof(tracelog_log_status, types_dropped)},
        {"threads_dropped", offsetof(tracelog_log_status, threads_dropped)},
    };
    tl_cbor_item map, k, v;
    memset(st, 0, sizeof *st);
    if (tl_cbor_next(in, &map) || map.kind != TL_CBOR_MAP)
        CORRUPT("status: not a CBOR map");
    for (uint64_t i = 0; i < map.u; i++) {
        if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &v))
            CORRUPT("status: bad entry");
        int done = 0;
        for (size_t f = 0; f < sizeof fields / sizeof *fields && !done; f++)
            if (tl_cbor_is_key(&k, fields[f].key)) {
                if (v.kind != TL_CBOR_UINT)
                    CORRUPT("status: bad counter");
                memcpy((char *)st + fields[f].off, &v.u, sizeof v.u);
                done = 1;
            }
        if (done)
            continue;
        if (tl_cbor_is_key(&k, "flush_error")) {
            if (v.kind != TL_CBOR_UINT || v.u > INT32_MAX)
                CORRUPT("status: bad flush_error");
            st->flush_error = (int32_t)v.u;
        } else if (tl_cbor_is_key(&k, "log_full")) {
            if (v.kind != TL_CBOR_BOOL)
                CORRUPT("status: bad log_full");
            st->log_full = (uint32_t)v.u;
        } else if (tl_cbor_skip(in, &v)) {
            CORRUPT("status: bad value");
        }
    }
    return TRACELOG_OK;
}
