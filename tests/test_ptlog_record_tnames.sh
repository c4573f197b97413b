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
# What ptlog says when the name map fails it: a program that spoils its
# worker's entry (gone_thread spoil-wait) leaves the thread unnamed, and
# attach's summary counts the refused name once (tracelog_trace_stats
# names_refused, read after the final drain); a program whose map is of
# another version (its version word rewritten, as test_posix_names_version
# does) is attached to with a warning that says what the log lacks.
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

# attach_waiting MODE ENDING NAME [OPTIONS]: the program (gone_thread MODE ENDING) opens its names,
# says ready and waits; ptlog attach OPTIONS writes NAME.ptl, its stderr in NAME.err; once the log
# exists the program is let go (BEFORE_GO, if set, runs first, with $pid). Its exit status is checked.
attach_waiting() {
    local mode=$1 ending=$2 name=$3 hold apid i
    shift 3
    sh -c '"$0" "$1" "$2" >"$3" & echo $! >"$3.pid"; exec sleep 300' "$PROG" "$mode" "$ending" "$name.out" &
    hold=$!
    for ((i = 0; i < 3000; i++)); do grep -qx ready "$name.out" 2>/dev/null && [ -s "$name.out.pid" ] && break; sleep 0.01; done
    pid=$(cat "$name.out.pid")
    [ -z "${BEFORE_GO:-}" ] || $BEFORE_GO
    "$PTLOG" attach "$@" "$pid" -o "$name.ptl" 2>"$name.err" &
    apid=$!
    for ((i = 0; i < 3000; i++)); do [ -e "$name.ptl" ] && break; sleep 0.01; done
    kill -USR1 "$pid"
    wait "$apid" && ok || bad "ptlog attach ($mode $ending): exit $?: $(cat "$name.err")"
    kill "$hold" 2>/dev/null
    wait "$hold" 2>/dev/null
}

for ending in exit kill; do
    want=$([ $ending = exit ] && echo 0 || echo 137)
    expect_rc "$want" "ptlog record ($ending)" "$PTLOG" record -q -o "record-$ending.ptl" -- "$PROG" bare "$ending"
    named "record-$ending.ptl"

    attach_waiting bare-wait "$ending" "attach-$ending" -q
    named "attach-$ending.ptl"

    expect_rc 0 "fork ($ending)" "$PROG" fork "fork-$ending.ptl" "$ending"
    named "fork-$ending.ptl"
done

# A thread name refused as malformed: in attach's summary, counted once (the writer asks for an
# unnamed thread at each write-out: 4 times here), not with -q; the thread is unnamed. (Not with
# record: there a drain sometimes saw the thread alive, 2 runs in 6, and named it from /proc; the
# sync record makes once the program has exec'd is the likely one.)
refused='^ptlog attach: thread names refused as malformed: 1 \(in the program.s name map: not NUL-terminated within 16 bytes, or empty\); those threads, gone before ptlog saw them, are unnamed in the log$'
attach_waiting spoil-wait exit spoiled
[ "$(grep -c '' spoiled.err)" = 2 ] && grep -q '^ptlog attach: spoiled.ptl written$' spoiled.err && grep -Eq "$refused" spoiled.err &&
    ok || bad "attach, a spoiled thread name: the summary is not 'written' and the count of 1: $(cat spoiled.err)"
attach_waiting spoil-wait exit spoiled-q -q
[ ! -s spoiled-q.err ] && ok || bad "attach -q, a spoiled thread name: said $(cat spoiled-q.err)"
for log in spoiled.ptl spoiled-q.ptl; do
    expect_rc 0 "$log: dump" "$PTLOG" dump --event gw.tick "$log"
    [ "$(grep -c ' gw.tick' "$T/out")" = 20 ] && ! grep -q '(gone-worker)\|(xxx' "$T/out" && ok ||
        bad "$log: want 20 gw.tick events on an unnamed thread: $(head -3 "$T/out")"
done

# A name map of another version: attach warns (with -q too) and the log has the events under ids only.
old_version() { # the map's version word (its second) set to 3, as test_posix_names_version does
    local maps=(/dev/shm/tracelog."$(id -u)"."$pid".names.*)
    [ ${#maps[@]} = 1 ] && [ -f "${maps[0]}" ] && ok || bad "version: not one name map for $pid: ${maps[*]}"
    [ "$(od -An -tu4 -j4 -N4 "${maps[0]}" | tr -d ' ')" = 5 ] && ok ||
        bad "version: the map's version word is not 5 (a new layout bumps it, and this test)"
    printf '\003' | dd of="${maps[0]}" bs=1 seek=4 conv=notrunc status=none
}
BEFORE_GO=old_version attach_waiting bare-wait exit version -q
warning="^ptlog: attach: warning: the program's event-name map is of another version of libtracelog \(or is not a name map\) and was refused: the log has its events under their ids only, without their names, payload schemas, or the names of threads that ended before their events were written$"
[ "$(grep -c '' version.err)" = 1 ] && grep -Eq "$warning" version.err && ok ||
    bad "attach, a map of another version: stderr is not the one warning: $(cat version.err)"
expect_rc 0 "version.ptl verifies" "$PTLOG" verify -q version.ptl
expect_rc 0 "version.ptl: dump" "$PTLOG" dump version.ptl
[ "$(grep -c 'gw\.' "$T/out")" = 0 ] && [ "$(grep -vc 'posix_trace_\|tracelog_' "$T/out")" = 21 ] && ok ||
    bad "version.ptl: want 21 events under ids, no gw. name: $(grep -v 'posix_trace_\|tracelog_' "$T/out" | head -3)"
finish
