#!/bin/bash
# Thread names on the paths where another process writes the log (issue 26):
# a thread that ended before its events were drained is named by the name it
# had at its first event, which the traced process publishes in its name map
# (posix/thread_names.h), not by /proc (its entry is gone by then). The
# program (tests/ptlog/gone_thread.c) names a thread "gone-worker", which
# records 20 events, renames itself and ends; the program then exits or is
# killed. The controller drains nothing before (its flush interval is 10
# minutes: the process's end is its first drain). Along `ptlog record`,
# `ptlog attach` and a parent's inherited stream drained after its forked
# child ended; each ended by exit and by SIGKILL.
. "$(dirname "$0")/ptlog/lib.sh"
BUILD=${TL_BUILD_DIR:?set TL_BUILD_DIR}
PROG=$BUILD/tests/gone_thread
export TRACELOG_FLUSH_INTERVAL_MS=600000

# named LOG: every gw.tick event of LOG is on the thread named gone-worker, its first-event name.
named() {
    expect_rc 0 "$1: dump" "$PTLOG" dump --event gw.tick "$1"
    local n all
    n=$(grep -c ' (gone-worker) gw.tick' "$T/out")
    all=$(grep -c ' gw.tick' "$T/out")
    [ "$n" = 20 ] && [ "$all" = 20 ] && ok || bad "$1: $n of $all gw.tick events on gone-worker, want 20 of 20: $(head -3 "$T/out")"
}

for ending in exit kill; do
    want=$([ $ending = exit ] && echo 0 || echo 137)
    expect_rc "$want" "ptlog record ($ending)" "$PTLOG" record -q -o "record-$ending.ptl" -- "$PROG" bare "$ending"
    named "record-$ending.ptl"

    # attach: the program opens its names, says ready and waits; once the log exists it is let go.
    sh -c '"$0" bare-wait "$1" >"$2" & echo $! >"$2.pid"; exec sleep 300' "$PROG" "$ending" "attach-$ending.out" &
    hold=$!
    for ((i = 0; i < 3000; i++)); do grep -qx ready "attach-$ending.out" 2>/dev/null && [ -s "attach-$ending.out.pid" ] && break; sleep 0.01; done
    pid=$(cat "attach-$ending.out.pid")
    "$PTLOG" attach -q "$pid" -o "attach-$ending.ptl" 2>"attach-$ending.err" &
    apid=$!
    for ((i = 0; i < 3000; i++)); do [ -e "attach-$ending.ptl" ] && break; sleep 0.01; done
    kill -USR1 "$pid"
    wait "$apid" && ok || bad "ptlog attach ($ending): exit $?: $(cat "attach-$ending.err")"
    kill "$hold" 2>/dev/null
    wait "$hold" 2>/dev/null
    named "attach-$ending.ptl"

    expect_rc 0 "fork ($ending)" "$PROG" fork "fork-$ending.ptl" "$ending"
    named "fork-$ending.ptl"
done
finish
