#!/bin/bash
# <trace.h>'s inline posix_trace_event (issue 27) as a compiler sees it, no
# library linked: a call through the macro, (posix_trace_event)(...),
# &posix_trace_event and a call after #undef compile in strict C99/C11/C17
# -pedantic -Wall -Wextra -Werror (gcc, and clang where installed) and in
# C++17/C++20 -pedantic (g++ where installed); the inline test is there
# (the object references tracelog_event_gate), and with
# TRACELOG_NO_INLINE_EVENT defined it is not (posix_trace_event is no macro,
# the object references only the function).
SRC=${TL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/inline.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }
inc=$SRC/include

cat >"$T/use.c" <<'C'
#include <stddef.h>
#include <trace.h>
void use(trace_event_id_t id, const void *data, size_t len);
void use(trace_event_id_t id, const void *data, size_t len)
{
    void (*fn)(trace_event_id_t, const void *, size_t) = &posix_trace_event;
    posix_trace_event(id, data, len);
    (posix_trace_event)(id, data, len);
    fn(id, data, len);
}
#undef posix_trace_event
void use_undef(trace_event_id_t id);
void use_undef(trace_event_id_t id) { posix_trace_event(id, NULL, 0); }
C
cat >"$T/off.c" <<'C'
#define TRACELOG_NO_INLINE_EVENT
#include <trace.h>
#ifdef posix_trace_event
#error "TRACELOG_NO_INLINE_EVENT leaves posix_trace_event a macro"
#endif
void off(trace_event_id_t id);
void off(trace_event_id_t id) { posix_trace_event(id, 0, 0); }
C

# Undefined symbols of an object: does it reference the gate, and the function?
refs() { nm -u "$1" | awk '{ print $NF }' | grep -E '^(tracelog_event_gate|posix_trace_event)$' | sort | tr '\n' ' '; }

# check LABEL WANT COMPILER ARGS... : compiles (-c) with ARGS, then compares what the object references with WANT.
check() {
    local label=$1 want=$2
    shift 2
    if "$@" -pedantic -Wall -Wextra -Werror -I"$inc" -c -o "$T/o.o" 2>"$T/err"; then
        local r
        r=$(refs "$T/o.o")
        [ "$r" = "$want" ] && ok || bad "$label: the object references '$r', want '$want'"
    else
        bad "$label: $(grep -m2 error "$T/err")"
    fi
}
both="posix_trace_event tracelog_event_gate "

compilers=(gcc)
command -v clang >/dev/null && compilers+=(clang)
for cc in "${compilers[@]}"; do
    for std in c99 c11 c17; do
        for opt in -O0 -O2; do
            check "$cc -std=$std $opt" "$both" "$cc" -std=$std $opt "$T/use.c"
        done
        check "$cc -std=$std, TRACELOG_NO_INLINE_EVENT" "posix_trace_event " "$cc" -std=$std -O2 "$T/off.c"
    done
done

if command -v g++ >/dev/null; then
    cp "$T/use.c" "$T/use.cpp"
    for std in c++17 c++20; do
        check "g++ -std=$std" "$both" g++ -std=$std -O2 "$T/use.cpp"
    done
else
    echo "(C++ checks skipped: no g++)"
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
