/*
 * offline_analyzer: reads a .ptl log through the standard interface
 * (posix_trace_open, posix_trace_getnext_event) and prints per-event-type
 * statistics: count, first and last time, payload size range.
 *
 *   offline_analyzer FILE.ptl
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#define MAX_TYPES 2048

typedef struct stats {
    unsigned long count;
    struct timespec first, last;
    size_t min_len, max_len;
} stats;

static stats table[MAX_TYPES];

static double seconds(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec / 1e9; }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: offline_analyzer FILE.ptl\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "offline_analyzer: %s: %s\n", argv[1], strerror(errno));
        return 3;
    }
    trace_id_t trid;
    int e = posix_trace_open(fd, &trid);
    if (e) {
        fprintf(stderr, "offline_analyzer: %s: not a readable trace log (%s)\n", argv[1], strerror(e));
        return 3;
    }
    trace_attr_t attr;
    char name[TRACE_NAME_MAX], version[TRACE_NAME_MAX];
    posix_trace_get_attr(trid, &attr);
    posix_trace_attr_getname(&attr, name);
    posix_trace_attr_getgenversion(&attr, version);
    printf("trace \"%s\" written by %s\n", name, version);

    struct posix_trace_event_info info;
    unsigned char data[65536];
    size_t len;
    int unavailable;
    unsigned long total = 0;
    while ((e = posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &unavailable)) == 0 && !unavailable) {
        if (info.posix_event_id >= MAX_TYPES)
            continue;
        stats *s = &table[info.posix_event_id];
        if (s->count++ == 0) {
            s->first = info.posix_timestamp;
            s->min_len = len;
        }
        s->last = info.posix_timestamp;
        if (len < s->min_len)
            s->min_len = len;
        if (len > s->max_len)
            s->max_len = len;
        total++;
    }
    if (e) {
        fprintf(stderr, "offline_analyzer: reading: %s\n", strerror(e));
        return 3;
    }
    printf("%-32s %10s %14s %14s %10s\n", "event", "count", "first (s)", "last (s)", "bytes");
    for (trace_event_id_t id = 0; id < MAX_TYPES; id++) {
        stats *s = &table[id];
        if (!s->count)
            continue;
        char ev[TRACE_EVENT_NAME_MAX];
        if (posix_trace_eventid_get_name(trid, id, ev))
            snprintf(ev, sizeof ev, "event#%u", id);
        printf("%-32s %10lu %14.6f %14.6f %4zu..%-5zu\n", ev, s->count, seconds(s->first), seconds(s->last),
               s->min_len, s->max_len);
    }
    printf("%lu events\n", total);
    posix_trace_close(trid);
    close(fd);
    return 0;
}
