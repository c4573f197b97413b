/*
 * A log written with the writer API whose texts hold what JSON cannot
 * carry: bytes that are not UTF-8 (a lone 0x9B, the 8-bit CSI of terminals
 * in Latin-1 mode; 0xFF; an overlong encoding; a cut sequence) next to ESC
 * sequences, BEL, CR and LF, and names of the largest length made only of
 * ESC. `ptlog info`, `info --threads`, `dump` and `verify` must print no
 * control byte and no invalid UTF-8, show each text in the documented
 * escaped form (tools/ptlog/README.md, "Text from files"), and keep their
 * line structure. Needs PTLOG (skipped without it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tl_test.h"

static const char *ptlog;
static char path[4096];

/* 1 if p[0..n) is valid UTF-8 without control characters other than \n (C0, DEL, C1). */
static int printable_utf8(const unsigned char *p, size_t n, size_t *bad_at)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        int ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (p[i + k] & 0xC0) == 0x80;
        if (ok && len == 1)
            ok = (c >= 0x20 && c != 0x7f) || c == '\n';
        if (ok && len == 2 && c == 0xC2)
            ok = p[i + 1] >= 0xA0; /* not a C1 control */
        if (!ok) {
            *bad_at = i;
            return 0;
        }
        i += len;
    }
    return 1;
}

/* Runs `$PTLOG args path`, returns its stdout (malloc'd, NUL-terminated) and sets *rc. */
static char *run(const char *args, int *rc)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>&1", ptlog, args, path);
    FILE *p = popen(cmd, "r");
    if (!p)
        TL_DIE("popen failed");
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    size_t k;
    while (out && (k = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (cap - n < 2) {
            char *bigger = realloc(out, cap *= 2);
            if (!bigger)
                TL_DIE("out of memory");
            out = bigger;
        }
    }
    if (!out)
        TL_DIE("out of memory");
    out[n] = 0;
    int status = pclose(p);
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

static void check_clean(const char *what, const char *out)
{
    size_t at = 0;
    CHECK_MSG(printable_utf8((const unsigned char *)out, strlen(out), &at),
              "%s: control byte or invalid UTF-8 at offset %zu: \"%.40s\"", what, at, out + (at > 10 ? at - 10 : 0));
}

static size_t count_lines_starting(const char *out, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += strncmp(l, prefix, len) == 0;
    return n;
}

static void write_crafted_log(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/tl-crafted-names.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        TL_DIE("mkstemp failed");
    tracelog_metadata m;
    tl_test_metadata(&m, TRACELOG_POLICY_APPEND, 0);
    snprintf(m.trace_name, sizeof m.trace_name, "a\x9b" "2Jb\xff" "c\xc0\xaf" "d\xe2\x82");
    snprintf(m.hostname, sizeof m.hostname, "host\r\nproblems: 0");
    snprintf(m.program, sizeof m.program, "/bin/\x1b]0;title\x07x");
    memset(m.generation_version, 0x1b, TRACELOG_TEXT_MAX); /* the longest text, all escapes */
    m.generation_version[TRACELOG_TEXT_MAX] = 0;
    tracelog_writer *w;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, &m, NULL, &w, &err), TRACELOG_OK))
        TL_DIE("cannot write the crafted log: %s", err.message);
    char longest[TRACELOG_TEXT_MAX + 1];
    memset(longest, 0x1b, TRACELOG_TEXT_MAX);
    longest[TRACELOG_TEXT_MAX] = 0;
    CHECK_STATUS(tracelog_writer_define_event(w, 1, "csi\x9b" "31m"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event(w, 2, "nl\nevents: 0"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event(w, 3, longest), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event(w, 4, "ok\xc3\xa9"), TRACELOG_OK);
    for (uint32_t id = 1; id <= 4; id++) {
        tracelog_event ev = {.timestamp_ns = 1000 * id, .event_id = id, .pid = 42, .tid = 0x1000 + id,
                             .payload_len = 3, .payload = "\x1b[H"};
        CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
    }
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    close(fd);
}

static void test_info_and_dump(void)
{
    int rc;
    char *out = run("info --threads", &rc);
    CHECK_EQ_INT(rc, 0);
    check_clean("info", out);
    CHECK(strstr(out, "\ntrace name:       \"a\\x9b2Jb\\xffc\\xc0\\xafd\\xe2\\x82\"\n") != NULL);
    CHECK(strstr(out, "\nhost:             \"host\\r\\nproblems: 0\" (") != NULL);
    CHECK(strstr(out, "\nprocess:          ") && strstr(out, " \"/bin/\\x1b]0;title\\x07x\"\n"));
    CHECK(strstr(out, "  \"csi\\x9b31m\"\n") != NULL);
    CHECK(strstr(out, "  \"nl\\nevents: 0\"\n") != NULL);
    CHECK(strstr(out, "  ok\xc3\xa9\n") != NULL); /* valid UTF-8 prints bare */
    /* The longest text, whole: 255 escapes of 4 characters each, quoted. */
    char want[4 * TRACELOG_TEXT_MAX + 3];
    want[0] = '"';
    for (int i = 0; i < TRACELOG_TEXT_MAX; i++)
        memcpy(want + 1 + 4 * i, "\\x1b", 4);
    want[1 + 4 * TRACELOG_TEXT_MAX] = '"';
    want[2 + 4 * TRACELOG_TEXT_MAX] = 0;
    CHECK_MSG(strstr(out, want) != NULL, "the longest name is not shown whole");
    CHECK_EQ(count_lines_starting(out, "problems:"), 1);
    CHECK_EQ(count_lines_starting(out, "events:"), 1);
    free(out);

    out = run("dump --relative", &rc);
    CHECK_EQ_INT(rc, 0);
    check_clean("dump", out);
    CHECK(strstr(out, "0.000000000 42 0x1001 \"csi\\x9b31m\" 1b5b48\n") == out);
    CHECK(strstr(out, "\n0.000001000 42 0x1002 \"nl\\nevents: 0\" 1b5b48\n") != NULL);
    CHECK(strstr(out, "\n0.000003000 42 0x1004 ok\xc3\xa9 1b5b48\n") != NULL);
    free(out);

    out = run("verify", &rc);
    CHECK_EQ_INT(rc, 0);
    check_clean("verify", out);
    free(out);
    out = run("dump --color=always", &rc);
    CHECK_EQ_INT(rc, 0);
    free(out);
}

int main(void)
{
    ptlog = getenv("PTLOG");
    if (!ptlog || !*ptlog) {
        printf("skipped: PTLOG is not set (ptlog not built)\n");
        return 77;
    }
    write_crafted_log();
    TL_TEST_RUN(test_info_and_dump);
    unlink(path);
    return tl_test_finish();
}
