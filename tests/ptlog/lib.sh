# Shared helpers of the tests/test_ptlog_*.sh scripts (sourced, not a test).
# Environment: PTLOG (the ptlog binary, set by ctest), TL_SOURCE_DIR (optional).
# PTLOG_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (review the diff!).

PTLOG=${PTLOG:?set PTLOG to the ptlog binary}
case $PTLOG in /*) ;; *) PTLOG=$PWD/$PTLOG ;; esac
SRC=${TL_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
GOLD=$SRC/tests/ptlog
T=$(mktemp -d "${TMPDIR:-/tmp}/ptlog-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export LC_ALL=C TZ=UTC
PASS=0
FAIL=0

ok() { PASS=$((PASS + 1)); }
bad() {
    FAIL=$((FAIL + 1))
    echo "FAIL: $*"
}

# run CMD...: runs with stdout in $T/out, stderr in $T/err, exit code in $RC.
run() {
    "$@" >"$T/out" 2>"$T/err"
    RC=$?
}

# expect_rc WANT DESC CMD...: the command exits with WANT.
expect_rc() {
    local want=$1 desc=$2
    shift 2
    run "$@"
    if [ "$RC" = "$want" ]; then ok; else bad "$desc: exit $RC, want $want; stderr: $(head -c 300 "$T/err")"; fi
}

# expect_err REGEX DESC: stderr is exactly one line matching REGEX (grep -E).
expect_err() {
    local lines
    lines=$(wc -l <"$T/err")
    if [ "$lines" = 1 ] && grep -Eq -- "$1" "$T/err"; then ok; else bad "$2: stderr is not one line matching /$1/: $(head -c 400 "$T/err")"; fi
}

# expect_same DESC FILE1 FILE2
expect_same() {
    if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ: $(diff "$2" "$3" | head -5)"; fi
}

# golden NAME FILE: FILE equals tests/ptlog/NAME.
golden() {
    if [ -n "${PTLOG_UPDATE_GOLDEN:-}" ]; then
        cp "$2" "$GOLD/$1"
        ok
        return
    fi
    if cmp -s "$GOLD/$1" "$2"; then ok; else bad "golden $1 differs:
$(diff -u "$GOLD/$1" "$2" | head -20)"; fi
}

# The small deterministic log of tests/ptlog/small.in.jsonl (hand-written input), as small.ptl in $T.
make_small() {
    "$PTLOG" convert "$GOLD/small.in.jsonl" --to ptl -o small.ptl || { bad "cannot build small.ptl"; finish; }
}

# A log of N (< 1000000) events, one per microsecond, with several chunks, as NAME.ptl (and NAME.jsonl).
make_many() {
    local name=$1 n=$2
    awk -v n="$n" 'BEGIN {
        print "{\"format\":{\"schema\":\"tracelog\",\"version\":1},\"attributes\":{\"trace_name\":\"many\",\"creation_time_ns\":1714564800000000000},\"event_types\":[{\"id\":1,\"name\":\"tick\"},{\"id\":2,\"name\":\"tock\"}]}"
        for (i = 0; i < n; i++)
            printf "{\"name\":\"%s\",\"id\":%d,\"ts\":1714564800%09d,\"pid\":%d,\"tid\":%d,\"address\":%d,\"truncation\":0,\"data\":\"%08x%08x\"}\n",
                (i % 2 ? "tock" : "tick"), 1 + i % 2, i * 1000, 100 + i % 3, 4096 + i % 5, 4198400 + i % 7, i, i * 7919
    }' >"$name.jsonl"
    "$PTLOG" convert "$name.jsonl" --to ptl -o "$name.ptl" || { bad "cannot build $name.ptl"; finish; }
}

# blocked_threads LOG DUMP_ARGS [ENV...]: the threads `ptlog dump DUMP_ARGS LOG` runs (with ENV) once it
# waits in a write to a pipe no one reads ("none" if it never does).
blocked_threads() {
    local log=$1 args=$2
    shift 2
    rm -f out.fifo && mkfifo out.fifo
    exec 7<>out.fifo # held open, never read: ptlog's writes stop once the pipe is full
    # shellcheck disable=SC2086
    env "$@" "$PTLOG" dump $args "$log" >out.fifo &
    local pid=$! i threads=none
    for ((i = 0; i < 1000; i++)); do
        if grep -q pipe_write "/proc/$pid/wchan" 2>/dev/null; then
            threads=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$pid/status")
            break
        fi
        sleep 0.01
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    exec 7>&-
    echo "$threads"
}

finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" = 0 ]
    exit
}
