/* Stream attribute objects (trace_attr_t). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "posix/internal.h"
#include "stream/stream.h"
#include "tracelog/common.h"
#include "tracelog/posix.h"

#define CHECK(a) do { if (!(a) || (a)->__magic != TL_ATTR_MAGIC) return EINVAL; } while (0)

int posix_trace_attr_init(trace_attr_t *attr)
{
    if (!attr)
        return EINVAL;
    memset(attr, 0, sizeof *attr);
    attr->__magic = TL_ATTR_MAGIC;
    strcpy(attr->__genversion, "tracelog " TRACELOG_VERSION_STRING);
    struct timespec res = {0, 1};
    clock_getres(CLOCK_MONOTONIC, &res); /* timestamps are read from CLOCK_MONOTONIC */
    attr->__clock_res = res;
    attr->__max_data_size = TL_DEFAULT_MAX_DATA;
    attr->__stream_size = TL_DEFAULT_STREAM_SIZE;
    attr->__log_size = TL_DEFAULT_LOG_SIZE;
    attr->__stream_policy = 0; /* decided at creation: LOOP without log, FLUSH with log */
    attr->__log_policy = POSIX_TRACE_LOOP;
    attr->__inheritance = POSIX_TRACE_CLOSE_FOR_CHILD;
    return 0;
}

int posix_trace_attr_destroy(trace_attr_t *attr)
{
    CHECK(attr);
    attr->__magic = 0;
    return 0;
}

int posix_trace_attr_getclockres(const trace_attr_t *attr, struct timespec *resolution)
{
    CHECK(attr);
    if (!resolution)
        return EINVAL;
    *resolution = attr->__clock_res;
    return 0;
}

int posix_trace_attr_getcreatetime(const trace_attr_t *attr, struct timespec *createtime)
{
    CHECK(attr);
    if (!createtime)
        return EINVAL;
    *createtime = attr->__create_time;
    return 0;
}

int posix_trace_attr_getgenversion(const trace_attr_t *attr, char *genversion)
{
    CHECK(attr);
    if (!genversion)
        return EINVAL;
    strcpy(genversion, attr->__genversion);
    return 0;
}

int posix_trace_attr_getname(const trace_attr_t *attr, char *tracename)
{
    CHECK(attr);
    if (!tracename)
        return EINVAL;
    strcpy(tracename, attr->__name);
    return 0;
}

int posix_trace_attr_setname(trace_attr_t *attr, const char *tracename)
{
    CHECK(attr);
    if (!tracename)
        return EINVAL;
    size_t n = strlen(tracename);
    if (n > TRACE_NAME_MAX - 1)
        n = TRACE_NAME_MAX - 1; /* the standard allows truncation */
    memcpy(attr->__name, tracename, n);
    attr->__name[n] = 0;
    return 0;
}

int posix_trace_attr_getinherited(const trace_attr_t *restrict attr, int *restrict inheritancepolicy)
{
    CHECK(attr);
    if (!inheritancepolicy)
        return EINVAL;
    *inheritancepolicy = attr->__inheritance;
    return 0;
}

int posix_trace_attr_setinherited(trace_attr_t *attr, int inheritancepolicy)
{
    CHECK(attr);
    if (inheritancepolicy != POSIX_TRACE_INHERITED && inheritancepolicy != POSIX_TRACE_CLOSE_FOR_CHILD)
        return EINVAL;
    attr->__inheritance = inheritancepolicy;
    return 0;
}

int posix_trace_attr_getlogfullpolicy(const trace_attr_t *restrict attr, int *restrict logpolicy)
{
    CHECK(attr);
    if (!logpolicy)
        return EINVAL;
    *logpolicy = attr->__log_policy;
    return 0;
}

int posix_trace_attr_setlogfullpolicy(trace_attr_t *attr, int logpolicy)
{
    CHECK(attr);
    if (logpolicy != POSIX_TRACE_LOOP && logpolicy != POSIX_TRACE_UNTIL_FULL && logpolicy != POSIX_TRACE_APPEND)
        return EINVAL;
    attr->__log_policy = logpolicy;
    return 0;
}

int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *restrict attr, int *restrict streampolicy)
{
    CHECK(attr);
    if (!streampolicy)
        return EINVAL;
    /* Not chosen yet: report LOOP, the default of a stream without log. */
    *streampolicy = attr->__stream_policy ? attr->__stream_policy : POSIX_TRACE_LOOP;
    return 0;
}

int posix_trace_attr_setstreamfullpolicy(trace_attr_t *attr, int streampolicy)
{
    CHECK(attr);
    if (streampolicy != POSIX_TRACE_LOOP && streampolicy != POSIX_TRACE_UNTIL_FULL &&
        streampolicy != POSIX_TRACE_FLUSH)
        return EINVAL;
    attr->__stream_policy = streampolicy;
    return 0;
}

int posix_trace_attr_getlogsize(const trace_attr_t *restrict attr, size_t *restrict logsize)
{
    CHECK(attr);
    if (!logsize)
        return EINVAL;
    *logsize = attr->__log_size;
    return 0;
}

int posix_trace_attr_setlogsize(trace_attr_t *attr, size_t logsize)
{
    CHECK(attr);
    attr->__log_size = logsize;
    return 0;
}

int posix_trace_attr_getmaxdatasize(const trace_attr_t *restrict attr, size_t *restrict maxdatasize)
{
    CHECK(attr);
    if (!maxdatasize)
        return EINVAL;
    *maxdatasize = attr->__max_data_size;
    return 0;
}

int posix_trace_attr_setmaxdatasize(trace_attr_t *attr, size_t maxdatasize)
{
    CHECK(attr);
    /* Larger requests are lowered to the limit; the standard says the system returns the limit it used. */
    attr->__max_data_size = maxdatasize > TL_MAX_DATA_LIMIT ? TL_MAX_DATA_LIMIT : maxdatasize;
    return 0;
}

int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *restrict attr, size_t *restrict eventsize)
{
    CHECK(attr);
    if (!eventsize)
        return EINVAL;
    *eventsize = tl_rec_size(2 * sizeof(trace_event_set_t)); /* FILTER carries two sets */
    return 0;
}

int posix_trace_attr_getmaxusereventsize(const trace_attr_t *restrict attr, size_t data_len,
                                         size_t *restrict eventsize)
{
    CHECK(attr);
    if (!eventsize)
        return EINVAL;
    size_t len = data_len < attr->__max_data_size ? data_len : attr->__max_data_size;
    *eventsize = tl_rec_size((uint32_t)len);
    return 0;
}

int posix_trace_attr_getstreamsize(const trace_attr_t *restrict attr, size_t *restrict streamsize)
{
    CHECK(attr);
    if (!streamsize)
        return EINVAL;
    *streamsize = attr->__stream_size;
    return 0;
}

int posix_trace_attr_setstreamsize(trace_attr_t *attr, size_t streamsize)
{
    CHECK(attr);
    attr->__stream_size = streamsize;
    return 0;
}

unsigned tl_posix_env_number(const char *name, unsigned min, unsigned max, unsigned fallback)
{
    const char *env = getenv(name);
    if (!env || *env < '0' || *env > '9')
        return fallback;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (errno || *end || v < min || v > max)
        return fallback;
    return (unsigned)v;
}

unsigned tl_posix_flush_interval_ms(const trace_attr_t *attr)
{
    if (attr->__flush_interval_ms)
        return attr->__flush_interval_ms;
    return tl_posix_env_number("TRACELOG_FLUSH_INTERVAL_MS", 1, TL_MAX_FLUSH_INTERVAL_MS, TL_DEFAULT_FLUSH_INTERVAL_MS);
}

unsigned tl_posix_flush_wait_us(const trace_attr_t *attr)
{
    if (attr->__flush_wait_us)
        return attr->__flush_wait_us < 0 ? 0 : (unsigned)attr->__flush_wait_us;
    return tl_posix_env_number("TRACELOG_FLUSH_WAIT_US", 0, TL_MAX_WAIT_US, TL_DEFAULT_FLUSH_WAIT_US);
}

int tracelog_trace_attr_setflushwait(trace_attr_t *attr, unsigned us)
{
    CHECK(attr);
    if (us > TL_MAX_WAIT_US)
        return EINVAL;
    attr->__flush_wait_us = us ? (int)us : -1;
    return 0;
}

int tracelog_trace_attr_getflushwait(const trace_attr_t *attr, unsigned *us)
{
    CHECK(attr);
    if (!us)
        return EINVAL;
    *us = tl_posix_flush_wait_us(attr);
    return 0;
}

int tracelog_trace_attr_setflushinterval(trace_attr_t *attr, unsigned ms)
{
    CHECK(attr);
    if (ms < 1 || ms > TL_MAX_FLUSH_INTERVAL_MS)
        return EINVAL;
    attr->__flush_interval_ms = ms;
    return 0;
}

int tracelog_trace_attr_getflushinterval(const trace_attr_t *attr, unsigned *ms)
{
    CHECK(attr);
    if (!ms)
        return EINVAL;
    *ms = tl_posix_flush_interval_ms(attr);
    return 0;
}
