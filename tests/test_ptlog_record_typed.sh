#!/bin/bash
# A recorded log keeps the traced program's payload schemas (issue 26 items 1
# and 2): they travel in the name map beside the names, so a log that
# `ptlog record` or `ptlog attach` writes reads as the program's own
# in-process log does, field for field; and a program that opens only typed
# ids (tracelog_eventid_open_typed) can be attached to.
. "$(dirname "$0")/ptlog/lib.sh"
SAMPLES=${TL_BUILD_DIR:?set TL_BUILD_DIR}/samples
TYPED_ONLY=$TL_BUILD_DIR/tests/typed_only

# The user events of a log as dump shows them, without the time and the thread's name (ptlog reads
# it from /proc, where a thread that ended before ptlog drained its events has none left): pid,
# thread, tid, name, fields.
user_events() {
    "$PTLOG" dump "$1" | sed -E 's/^([^ ]+ [0-9]+ [^ ]+ tid [0-9]+) \([^) ]*\) /\1 /' |
        awk '{ $1 = "" } !/ (posix_trace_|tracelog_)[a-z_]* ?/' | sort
}

# record: samples/typed writes its own log in-process while ptlog records it.
expect_rc 0 "record samples/typed" "$PTLOG" record -q -o rec.ptl -- "$SAMPLES/typed" own.ptl
user_events own.ptl >own.txt
user_events rec.ptl >rec.txt
[ -s own.txt ] && grep -q ' net.rx { len = ' own.txt && ok || bad "the in-process log has no typed events: $(head -2 own.txt)"
expect_same "recorded and in-process logs, event for event, field for field" own.txt rec.txt
n=$("$PTLOG" dump --where 'port == 8080' rec.ptl | wc -l)
m=$("$PTLOG" dump --where 'port == 8080' own.ptl | wc -l)
[ "$n" -gt 0 ] && [ "$n" = "$m" ] && ok || bad "--where on the recorded log: $n events, $m in-process"
"$PTLOG" info --json rec.ptl >info.json
grep -q '"name":"net.rx",.*"schema":"u32 len; ' info.json && ok || bad "info --json of the recorded log gives no schema for net.rx: $(grep -m1 net.rx info.json)"
expect_rc 0 "merge of the in-process and the recorded log" "$PTLOG" merge own.ptl rec.ptl -o merged.ptl

# record --exclude of a typed event: ptlog opens the name (untyped) in the program's map to filter
# it before the program opens it; the program's typed open of it must still succeed (it failed with
# EEXIST: samples/typed exited 1), and the log holds the other types, decoded, and none of it.
expect_rc 0 "record --exclude of a typed event" "$PTLOG" record -q --exclude cpu.load -o ex.ptl -- "$SAMPLES/typed" ex_own.ptl
"$PTLOG" dump ex.ptl | grep -q ' cpu.load ' && bad "record --exclude cpu.load: the log holds cpu.load events" || ok
grep -q ' net.rx { len = ' <(user_events ex.ptl) && ok || bad "record --exclude cpu.load: net.rx not decoded: $(user_events ex.ptl | head -1)"
n=$(user_events ex_own.ptl | grep -c ' cpu.load { load = ')
[ "$n" -gt 0 ] && ok || bad "record --exclude cpu.load: the program's own log lost cpu.load's schema ($n decoded)"

# attach to a program that opens only typed ids (it could not be found before).
"$TYPED_ONLY" 3 &
pid=$!
for _ in $(seq 100); do [ -e "/dev/shm/tracelog.$(id -u).$pid" ] && break; sleep 0.02; done
expect_rc 0 "attach to a typed-only program" "$PTLOG" attach -q "$pid" -o att.ptl
wait "$pid"
n=$("$PTLOG" dump --where 'prio == HIGH' att.ptl | grep -c ' job.submit { job = [0-9]*, prio = HIGH, cost = ')
[ "$n" -gt 0 ] && ok || bad "attach: no job.submit with prio HIGH decoded: $("$PTLOG" dump att.ptl | sed -n 3p)"
n=$("$PTLOG" dump att.ptl | grep -c ' job.done { job = [0-9]*, status = -\{0,1\}[0-9]* }')
[ "$n" -gt 0 ] && ok || bad "attach: no job.done decoded"
"$PTLOG" dump att.ptl | grep -q 'event#' && bad "attach: events without a name" || ok

finish
