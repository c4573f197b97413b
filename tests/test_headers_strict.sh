#!/bin/bash
# The public headers compile in strict ISO modes with no feature macro from
# the user (a CMake project with C_EXTENSIONS OFF): <trace.h> and
# <tracelog.h> alone and together under -std=c99, c11 and c17 -pedantic
# -Wall -Wextra -Werror (gcc, and clang where installed), and C++17
# -pedantic with g++ where installed; a program using the types compiles and
# sees the same layout of posix_trace_event_info and trace_attr_t in strict
# and GNU modes (no ABI that depends on the user's flags: compared as symbol
# sizes in object files, nothing linked).
SRC=${TL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/strict.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }
inc=$SRC/include

cat >"$T/use.c" <<'C'
#include <stdio.h>
#include <stddef.h>
#include <trace.h>
#include <tracelog.h>
int main(void)
{
    trace_attr_t attr;
    trace_event_id_t id;
    struct posix_trace_event_info info;
    tracelog_status st = TRACELOG_OK;
    if (posix_trace_attr_init(&attr) == 0 && posix_trace_eventid_open("strict", &id) == 0)
        posix_trace_attr_destroy(&attr);
    printf("%zu %zu %zu %zu %zu %d\n", sizeof info, offsetof(struct posix_trace_event_info, posix_thread_id),
           offsetof(struct posix_trace_event_info, posix_timestamp), sizeof attr, sizeof(pthread_t), (int)st);
    return 0;
}
C
compilers=(gcc)
command -v clang >/dev/null && compilers+=(clang)
for cc in "${compilers[@]}"; do
    for std in c99 c11 c17; do
        for h in "#include <trace.h>" "#include <tracelog.h>" "#include <tracelog.h>
#include <trace.h>"; do
            printf '%s\nint main(void) { return 0; }\n' "$h" >"$T/h.c"
            if "$cc" -std=$std -pedantic -Wall -Wextra -Werror -I"$inc" -c "$T/h.c" -o "$T/h.o" 2>"$T/err"; then ok; else
                bad "$cc -std=$std: $(echo "$h" | tr '\n' ' '): $(grep -m2 error "$T/err")"
            fi
        done
        if "$cc" -std=$std -pedantic -Wall -Wextra -Werror -I"$inc" -c "$T/use.c" -o "$T/use-$cc-$std.o" 2>"$T/err"; then ok; else
            bad "$cc -std=$std: a program using the API: $(grep -m2 error "$T/err")"
        fi
    done
done

# The layout a strict program sees is the library's (built with -std=gnu11): the sizes and offsets
# as the sizes of arrays in an object file (nm -S), so nothing is linked (sanitized builds included).
cat >"$T/layout.c" <<'C'
#include <stddef.h>
#include <trace.h>
char size_event_info[sizeof(struct posix_trace_event_info)];
char off_thread_id[offsetof(struct posix_trace_event_info, posix_thread_id) + 1];
char off_timestamp[offsetof(struct posix_trace_event_info, posix_timestamp) + 1];
char size_attr[sizeof(trace_attr_t)];
char size_pthread[sizeof(pthread_t)];
C
layout() { # STD: "NAME SIZE" lines
    gcc -std="$1" -I"$inc" -c "$T/layout.c" -o "$T/layout-$1.o" 2>"$T/err" &&
        nm -S --defined-only "$T/layout-$1.o" | awk '{ print $4, $2 }' | sort
}
strict=$(layout c11) gnu=$(layout gnu11)
[ "$(printf '%s\n' "$strict" | grep -c .)" = 5 ] && [ "$strict" = "$gnu" ] && ok ||
    bad "layout in -std=c11 ($strict) and -std=gnu11 ($gnu) differ: $(head -c 300 "$T/err")"

if command -v g++ >/dev/null; then
    printf '#include <trace.h>\n#include <tracelog.h>\nint main() { trace_attr_t a; return posix_trace_attr_init(&a); }\n' >"$T/h.cpp"
    for std in c++17 c++20; do
        if g++ -std=$std -pedantic -Wall -Wextra -Werror -I"$inc" -c "$T/h.cpp" -o "$T/h.o" 2>"$T/err"; then ok; else
            bad "g++ -std=$std: $(grep -m2 error "$T/err")"
        fi
    done
else
    echo "(C++ checks skipped: no g++)"
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
