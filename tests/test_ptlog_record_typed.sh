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

# The filter is by name (tracelog_trace_filter_name): the program's names keep the ids of its own
# order (ptlog opened cpu.load first, which gave it the first id and shifted the program's), and the
# program records the filter change when it opens cpu.load, before its first event.
types() { "$PTLOG" convert "$1" --to jsonl -o - | head -1 | grep -o '"id":[0-9]*,"name":"[a-z]*\.[a-z]*"'; }
expect_rc 0 "samples/typed alone" "$SAMPLES/typed" alone.ptl
types alone.ptl >alone.types
types ex.ptl >ex.types
[ "$(wc -l <alone.types)" = 4 ] && ok || bad "the program's own log has not its 4 types: $(cat alone.types)"
expect_same "record --exclude: the program's ids, as in its own log untraced" alone.types ex.types
"$PTLOG" dump ex.ptl | sed -n '/ posix_trace_filter /,$p' | sed -n '1p;2p' >ex.filter
grep -q ' posix_trace_filter { old_event_filter = \[\], new_event_filter = \[cpu.load\] }$' ex.filter && ok ||
    bad "record --exclude: no FILTER event naming cpu.load: $(head -c 300 ex.filter)"
grep -q ' posix_trace_filter ' <(sed -n 2p ex.filter) && bad "record --exclude: a second FILTER event" || ok
# --event keeps only the named type, the ids again the program's.
expect_rc 0 "record --event net.rx" "$PTLOG" record -q --event net.rx -o ev.ptl -- "$SAMPLES/typed" ev_own.ptl
types ev.ptl >ev.types
expect_same "record --event: the program's ids, as in its own log untraced" alone.types ev.types
n=$(user_events ev.ptl | grep -c ' net.rx { len = ')
m=$(user_events ev.ptl | grep -vc ' net.rx { len = ')
[ "$n" -gt 0 ] && [ "$m" = 0 ] && ok || bad "record --event net.rx: $n net.rx events and $m others"

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

# 80 schemas of about 16 KiB: more than the name map's schema arena held before (1 MiB, 67 of 80 kept, the
# rest dumped as raw bytes without a word), within what a log holds (4 MiB): every one decodes.
expect_rc 0 "record big schemas" "$PTLOG" record -q -o big.ptl -- "$TL_BUILD_DIR/tests/big_schemas" 80
n=$("$PTLOG" dump big.ptl | grep -c ' big\.[0-9]* { field_[0-9_]*with_a_name_long_enough_to_weigh = ')
[ "$n" = 80 ] && ok || bad "record big schemas: $n of 80 events decoded"

finish
