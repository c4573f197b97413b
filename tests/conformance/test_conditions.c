/*
 * conditions_documented: the named conditions in the code
 * (libtracelog/format/condition.h) and in the documents agree. Every
 * condition has its row in format-spec/implementation-notes.md with the
 * status code the reader reports it with; every row names a condition of
 * the code; and every condition of the format (those not marked "tracelog
 * only") is named in format-spec/ptl-format.md.
 *
 *   test_conditions FORMAT_SPEC_DIR
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/condition.h"

static char *slurp(const char *dir, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (!f || getdelim(&buf, &len, '\0', f) < 0) {
        fprintf(stderr, "FAIL cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return buf;
}

/* The table row of name in the notes ("| NAME | `CODE` | ..."), or NULL. */
static const char *row_of(const char *notes, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\n| %s | ", name);
    return strstr(notes, key);
}

/* Is name in text as a whole word (not part of a longer condition name)? */
static int mentions(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, name)); p += n) {
        char before = p == text ? ' ' : p[-1], after = p[n];
        if (before != '_' && !(before >= 'A' && before <= 'Z') && after != '_' && !(after >= 'A' && after <= 'Z'))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_conditions FORMAT_SPEC_DIR\n");
        return 2;
    }
    char *notes = slurp(argv[1], "implementation-notes.md"), *spec = slurp(argv[1], "ptl-format.md");
    unsigned bad = 0;
    for (int c = 0; c < TL_COND_COUNT; c++) {
        const char *name = tl_condition_name((tl_condition)c);
        const char *code = tracelog_status_name(tl_condition_status((tl_condition)c));
        const char *row = row_of(notes, name);
        const char *eol = row ? strchr(row + 1, '\n') : NULL;
        char want[128];
        snprintf(want, sizeof want, "| %s | `%s` |", name, code);
        if (!row || strncmp(row + 1, want, strlen(want)) != 0) {
            printf("FAIL %s: implementation-notes.md has no row \"%s\"\n", name, want);
            bad++;
            continue;
        }
        int ours = eol && memmem(row, (size_t)(eol - row), "tracelog only", 13) != NULL;
        if (!ours && !mentions(spec, name)) {
            printf("FAIL %s: a condition of the format that ptl-format.md does not name\n", name);
            bad++;
        }
    }
    /* Rows of the notes' table that the code does not know. */
    for (const char *p = strstr(notes, "\n| Condition | Status code |"); p && (p = strchr(p + 1, '\n'));) {
        if (p[1] != '|')
            break;
        char name[64];
        if (sscanf(p, "\n| %63[A-Z_] |", name) != 1 || strcmp(name, "Condition") == 0)
            continue;
        int known = 0;
        for (int c = 0; c < TL_COND_COUNT && !known; c++)
            known = strcmp(name, tl_condition_name((tl_condition)c)) == 0;
        if (!known) {
            printf("FAIL %s: in implementation-notes.md, not in condition.h\n", name);
            bad++;
        }
    }
    printf("%d conditions: %u disagreements\n", TL_COND_COUNT, bad);
    free(notes);
    free(spec);
    return bad ? 1 : 0;
}
