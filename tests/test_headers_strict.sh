#!/bin/bash
# The public headers compile in strict ISO modes with no feature macro from
# the user (a CMake project with C_EXTENSIONS OFF): <trace.h> and
# <tracelog.h> alone and together under -std=c99, c11 and c17 -pedantic
# -Wall -Wextra -Werror (gcc, and clang where installed), and C++17
# -pedantic with g++ where installed; a program using the types compiles and
# sees the same layout of posix_trace_event_info and trace_attr_t in strict
# and GNU modes (no ABI that depends on the user's flags).
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

# The layout a strict program sees is the library's (built with -std=gnu11).
layout() { # CC STD
    "$1" -std="$2" -I"$inc" -o "$T/layout" "$T/use.c" -L"${TL_BUILD_DIR:-}" -x none "${TL_BUILD_DIR:-.}/libtracelog.a" \
        $(pkg-config --libs libzstd libcbor 2>/dev/null) -lpthread -lm 2>"$T/err" && "$T/layout"
}
if [ -n "${TL_BUILD_DIR:-}" ] && [ -f "$TL_BUILD_DIR/libtracelog.a" ]; then
    strict=$(layout gcc c11) gnu=$(layout gcc gnu11)
    [ -n "$strict" ] && [ "$strict" = "$gnu" ] && ok || bad "layout in -std=c11 '$strict' and -std=gnu11 '$gnu' differ: $(head -c 300 "$T/err")"
else
    echo "(layout check skipped: no libtracelog.a in TL_BUILD_DIR)"
fi

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
