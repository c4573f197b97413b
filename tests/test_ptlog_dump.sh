#!/bin/bash
# ptlog dump: the stable line format (golden), time options, event selection,
# standard input, colour, and recovery from damaged or cut logs (exit 1).
. "$(dirname "$0")/ptlog/lib.sh"
make_small

expect_rc 0 "dump" "$PTLOG" dump small.ptl
golden dump_utc.txt "$T/out"
expect_rc 0 "dump --relative" "$PTLOG" dump --relative small.ptl
golden dump_relative.txt "$T/out"
TZ=Etc/GMT-2 expect_rc 0 "dump --local" "$PTLOG" dump --local small.ptl
golden dump_local.txt "$T/out"

# Every input format dumps the same text.
"$PTLOG" dump small.ptl >utc.txt
expect_rc 0 "dump of the JSON Lines source" "$PTLOG" dump "$GOLD/small.in.jsonl"
expect_same "dump jsonl == dump ptl" utc.txt "$T/out"
run bash -c "cat small.ptl | '$PTLOG' dump -"
expect_same "dump - (pipe) == dump file" utc.txt "$T/out"
run "$PTLOG" dump - <small.ptl
expect_same "dump - (redirected file) == dump file" utc.txt "$T/out"

# Selection: the expected lines are those of the full dump.
expect_rc 0 "--event" "$PTLOG" dump --event 'request:*' --event alloc small.ptl
grep -E ' (request:[a-z]+|alloc) ' utc.txt >want
expect_same "--event globs (OR)" want "$T/out"
expect_rc 0 "--no-system" "$PTLOG" dump --no-system small.ptl
grep -v ' posix_trace_' utc.txt >want
expect_same "--no-system hides posix_trace_*" want "$T/out"
expect_rc 0 "--pid" "$PTLOG" dump --pid 4343 small.ptl
grep ' 4343 ' utc.txt >want
expect_same "--pid" want "$T/out"
expect_rc 0 "--tid hex" "$PTLOG" dump --tid 0x7f8d8242c740 small.ptl
grep ' 0x7f8d8242c740 ' utc.txt >want
expect_same "--tid" want "$T/out"
expect_rc 0 "--event unnamed" "$PTLOG" dump --event 'event#77' small.ptl
grep ' event#77 ' utc.txt >want
expect_same "unnamed ids match event#ID" want "$T/out"
expect_rc 0 "--limit" "$PTLOG" dump --limit 3 small.ptl
head -3 utc.txt >want
expect_same "--limit 3" want "$T/out"
expect_rc 0 "--begin/--end relative" "$PTLOG" dump --begin +499999900ns --end +1999999899ns small.ptl
sed -n '4,6p' utc.txt >want
expect_same "--begin inclusive, --end exclusive" want "$T/out"
expect_rc 0 "--begin/--end absolute" "$PTLOG" dump --begin 2024-05-01T12:00:00.5Z --end 2024-05-01T14:00:01.999999999+02:00 small.ptl
expect_same "absolute times with zone" want "$T/out"
expect_rc 0 "--begin ns" "$PTLOG" dump --begin 1714564801000000000 small.ptl
sed -n '5,$p' utc.txt >want
expect_same "--begin in ns since the epoch" want "$T/out"

# --begin seeks in a big file and filters on a pipe: same result.
make_many many 30000
"$PTLOG" dump many.ptl >many.txt
expect_rc 0 "--begin seek" "$PTLOG" dump --begin +20ms --limit 5 many.ptl
sed -n '20001,20005p' many.txt >want
expect_same "--begin with seek" want "$T/out"
run bash -c "cat many.ptl | '$PTLOG' dump --begin +20ms --limit 5 -"
expect_same "--begin on a pipe" want "$T/out"
lines=$(wc -l <many.txt)
[ "$lines" = 30000 ] && ok || bad "many.ptl dumps $lines lines, want 30000"

# Colour: never by default into a pipe, ANSI sequences with --color=always.
"$PTLOG" dump small.ptl | grep -q $'\033' && bad "colour in a pipe" || ok
run "$PTLOG" dump --color=always small.ptl
grep -q $'\033\[' "$T/out" && ok || bad "--color=always has no ANSI sequences"
sed 's/\x1b\[[0-9;]*m//g' "$T/out" >plain
expect_same "--color=always is the same text" utc.txt plain
expect_rc 2 "--color=sometimes" "$PTLOG" dump --color=sometimes small.ptl
expect_err '^ptlog: dump: --color: expected auto, always or never' "--color bad value"

# Thread ids: 0x and hex without padding, whatever their number of digits.
printf '{"ts":1,"id":1,"tid":291}\n{"ts":2,"id":1,"tid":"0xffffffffffffffff"}\n{"ts":4,"id":1,"tid":15}\n{"ts":5,"id":1}\n' >tids.jsonl
printf '%s\n' '0.000000000 0 0x123 event#1' '0.000000001 0 0xffffffffffffffff event#1' '0.000000003 0 0xf event#1' \
    '0.000000004 0 0x0 event#1' >want
expect_rc 0 "thread ids" "$PTLOG" dump --relative tids.jsonl
expect_same "thread ids in hex" want "$T/out"

# Long payloads are printed whole (text with escapes across the output slices, and hex).
hex=$({ head -c 8191 /dev/zero | tr '\0' a; printf '\n'; head -c 10000 /dev/zero | tr '\0' b; } | od -An -tx1 -v | tr -d ' \n')
printf '{"ts":1,"id":1,"name":"x","data":"%s"}\n{"ts":2,"id":1,"data":"00%s"}\n' "$hex" "$hex" >long.jsonl
{
    printf '0.000000000 0 0x0 x "'
    head -c 8191 /dev/zero | tr '\0' a
    printf '\\n'
    head -c 10000 /dev/zero | tr '\0' b
    printf '"\n0.000000001 0 0x0 x 00%s\n' "$hex"
} >want
expect_rc 0 "long payloads" "$PTLOG" dump --relative long.jsonl
expect_same "long payloads" want "$T/out"
run "$PTLOG" dump --relative --color=always long.jsonl
sed 's/\x1b\[[0-9;]*m//g' "$T/out" >plain
expect_same "long payloads in colour" want plain

# A log cut short: every complete chunk is dumped, a warning names the offset, exit 1.
size=$(stat -c %s many.ptl)
head -c $((size - 1000)) many.ptl >cut.ptl
expect_rc 1 "cut log" "$PTLOG" dump cut.ptl
grep -Eq '^ptlog: cut.ptl: warning: [0-9]+ bytes skipped at offset [0-9]+: .*TRACELOG_E_TRUNCATED' "$T/err" && ok ||
    bad "cut log warning: $(cat "$T/err")"
n=$(wc -l <"$T/out")
[ "$n" -gt 0 ] && [ "$n" -lt 30000 ] && ok || bad "cut log dumped $n lines"
head -n "$n" many.txt >want
expect_same "cut log: a prefix of the events" want "$T/out"

# A damaged chunk in the middle: the others are dumped, exit 1.
cp many.ptl damaged.ptl
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of=damaged.ptl bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect_rc 1 "damaged log" "$PTLOG" dump damaged.ptl
grep -Eq '^ptlog: damaged.ptl: warning: [0-9]+ bytes skipped at offset [0-9]+: .*TRACELOG_E_CHECKSUM' "$T/err" && ok ||
    bad "damaged log warning: $(cat "$T/err")"
n=$(wc -l <"$T/out")
[ "$n" -gt 0 ] && [ "$n" -lt 30000 ] && ok || bad "damaged log dumped $n lines"
tail -1 "$T/out" | cmp -s - <(tail -1 many.txt) && ok || bad "damaged log: the events after the damage are lost"
run bash -c "cat damaged.ptl | '$PTLOG' dump - >/dev/null"
[ "$RC" = 1 ] && ok || bad "damaged log on a pipe: exit $RC"

# --end stops reading a file once the chunks left hold only later events (tracelog_reader_set_end_time):
# the same lines as a filter, and the damaged chunk past the window is never read (exit 0, no
# warning); a pipe is read to its end and filtered, damage included.
awk '$1 < "2024-05-01T12:00:00.005"' many.txt >want
[ "$(wc -l <want)" -gt 1000 ] && [ "$(wc -l <want)" -lt 10000 ] && ok || bad "--end window of $(wc -l <want) lines"
for n in 0 2; do
    expect_rc 0 "--end, PTLOG_READ_AHEAD=$n" env PTLOG_READ_AHEAD=$n "$PTLOG" dump --end +5ms many.ptl
    expect_same "--end +5ms" want "$T/out"
    expect_rc 0 "--end before the damage, PTLOG_READ_AHEAD=$n" env PTLOG_READ_AHEAD=$n "$PTLOG" dump --end +5ms damaged.ptl
    expect_same "--end before the damage: the window" want "$T/out"
    [ ! -s "$T/err" ] && ok || bad "--end before the damage: $(cat "$T/err")"
done
expect_rc 0 "--begin/--end window" "$PTLOG" dump --begin +2ms --end +5ms many.ptl
awk '$1 >= "2024-05-01T12:00:00.002" && $1 < "2024-05-01T12:00:00.005"' many.txt >want
expect_same "--begin/--end: seek, then stop" want "$T/out"
run bash -c "cat damaged.ptl | '$PTLOG' dump --end +5ms - >'$T/pipe.out'"
[ "$RC" = 1 ] && ok || bad "--end on a pipe reads to the end (the damage seen): exit $RC"
awk '$1 < "2024-05-01T12:00:00.005"' many.txt | cmp -s - "$T/pipe.out" && ok || bad "--end on a pipe: not the window"

# Read ahead (PTLOG_READ_AHEAD threads load the next chunks): the same output, warnings and exit
# status whatever their number, on a clean log, a damaged one and with a selection.
"$PTLOG" dump damaged.ptl >damaged.txt 2>damaged.err
"$PTLOG" dump --event tock many.ptl >tock.txt
for n in 0 1 3 64; do
    expect_rc 0 "PTLOG_READ_AHEAD=$n" env PTLOG_READ_AHEAD=$n "$PTLOG" dump many.ptl
    expect_same "PTLOG_READ_AHEAD=$n: dump" many.txt "$T/out"
    expect_rc 1 "PTLOG_READ_AHEAD=$n, damaged" env PTLOG_READ_AHEAD=$n "$PTLOG" dump damaged.ptl
    expect_same "PTLOG_READ_AHEAD=$n: damaged log's events" damaged.txt "$T/out"
    expect_same "PTLOG_READ_AHEAD=$n: damaged log's warnings" damaged.err "$T/err"
    expect_rc 0 "PTLOG_READ_AHEAD=$n, --event" env PTLOG_READ_AHEAD=$n "$PTLOG" dump --event tock many.ptl
    expect_same "PTLOG_READ_AHEAD=$n: --event" tock.txt "$T/out"
done
for v in x -1 65 1.5 +3 ' 3'; do
    expect_rc 2 "PTLOG_READ_AHEAD='$v'" env PTLOG_READ_AHEAD="$v" "$PTLOG" dump many.ptl
    re=$(printf '%s' "$v" | sed 's/[][\.*^$+?(){}|]/\\&/g')
    expect_err "^ptlog: PTLOG_READ_AHEAD: expected a number of threads from 0 to 64, not '$re'\$" "PTLOG_READ_AHEAD='$v'"
done
# Checked for every command, before any input: a JSON input, a missing file.
expect_rc 2 "PTLOG_READ_AHEAD=x, JSON input" env PTLOG_READ_AHEAD=x "$PTLOG" dump many.jsonl
expect_rc 2 "PTLOG_READ_AHEAD=x, missing input" env PTLOG_READ_AHEAD=x "$PTLOG" info nosuch.ptl
expect_rc 0 "PTLOG_READ_AHEAD empty: the default" env PTLOG_READ_AHEAD= "$PTLOG" dump many.ptl
expect_same "PTLOG_READ_AHEAD empty: dump" many.txt "$T/out"
# ptlog does read ahead: blocked writing to a full pipe, a dump formatting on its own thread
# (PTLOG_FORMAT_THREADS=0) runs 1 + N threads (PTLOG_READ_AHEAD=N). By default the CPUs beyond its
# own, at most 3, format (test_ptlog_format_threads.sh; --delta, which is not read in ranges) and the
# chunks are loaded on its thread.
spare=$(($(nproc) - 1))
for n in 0 1 3 default; do
    if [ $n = default ]; then got=$(blocked_threads many.ptl --delta) want=$((1 + (spare < 3 ? spare : 3)))
    else got=$(blocked_threads many.ptl "" PTLOG_FORMAT_THREADS=0 PTLOG_READ_AHEAD=$n) want=$((1 + n)); fi
    [ "$got" = "$want" ] && ok || bad "PTLOG_READ_AHEAD=$n: ptlog ran $got threads, want $want"
done

# Unreadable inputs: one line, exit 3.
expect_rc 3 "missing file" "$PTLOG" dump nosuch.ptl
expect_err '^ptlog: nosuch.ptl: cannot open: No such file or directory$' "missing file"
mkdir adir
expect_rc 3 "directory" "$PTLOG" dump adir
expect_err '^ptlog: adir: is a directory$' "directory"
: >empty.ptl
expect_rc 3 "empty file" "$PTLOG" dump empty.ptl
expect_err '^ptlog: empty.ptl: empty input: truncated' "empty file"
echo 'just some text' >foreign.txt
expect_rc 3 "foreign file" "$PTLOG" dump foreign.txt
expect_err '^ptlog: foreign.txt: not a .ptl log, JSON or JSON Lines' "foreign file"
expect_rc 3 "foreign file as ptl" "$PTLOG" dump --from ptl foreign.txt
expect_err '^ptlog: foreign.txt: not a .ptl log \(bad magic\)$' "foreign file --from ptl"
head -c 20 small.ptl >tiny.ptl
expect_rc 3 "header cut short" "$PTLOG" dump tiny.ptl
expect_err '^ptlog: tiny.ptl: truncated' "header cut short"
expect_rc 3 "empty stdin" "$PTLOG" dump - </dev/null
expect_err '^ptlog: <stdin>: empty input: truncated' "empty stdin"

# Usage errors: exit 2.
expect_rc 2 "--relative --local" "$PTLOG" dump --relative --local small.ptl
expect_err 'cannot be used together' "--relative --local"
expect_rc 2 "bad --begin" "$PTLOG" dump --begin yesterday small.ptl
expect_err "^ptlog: --begin: 'yesterday' is not a time" "bad --begin"
# Texts made once and copied (threads, addresses, seconds, type names) stay right for each event:
# 300 threads and 200 addresses interleaved (more than the memo's slots, so they collide), type ids
# above the per-id caches, timestamps below one second, across seconds and going backwards.
if command -v python3 >/dev/null; then
    python3 - >memo.jsonl <<'PY'
import json
print(json.dumps({"attributes": {"trace_name": "memo"}, "event_types": [{"id": 5, "name": "five"}, {"id": 5000, "name": "big id"},
                                  {"id": 70000, "name": "bigger"}]}))
ts = [5, 999999999, 1000000000, 1700000000999999999, 1700000001000000000, 1699999999000000001]
ids = [5, 5000, 70000]
for i in range(3000):
    t = (i * 7) % 300
    print(json.dumps({"id": ids[i % 3], "ts": ts[i % 6] + i, "pid": 1000 + i % 7, "tid": 0x7f0000000000 + t,
                      "ktid": (2000 + t) if i % 5 else 0, "address": 0x400000 + (i * 13) % 200 * 16}))
PY
    expect_rc 0 "memo log" "$PTLOG" convert memo.jsonl --to ptl -o memo.ptl
    "$PTLOG" dump memo.ptl >memo.txt
    "$PTLOG" convert memo.ptl --to jsonl -o memo.out.jsonl
    python3 - memo.jsonl memo.txt memo.out.jsonl <<'PY' && ok || bad "a memoised text went to the wrong event"
import datetime, json, sys
src = [json.loads(l) for l in open(sys.argv[1])][1:]
names = {5: "five", 5000: '"big id"', 70000: "bigger"}
lines = [l for l in open(sys.argv[2]).read().splitlines()]
assert len(lines) == len(src), (len(lines), len(src))
for e, l in zip(src, lines):
    s, ns = divmod(e["ts"], 10**9)
    t = datetime.datetime.fromtimestamp(s, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    want = "%s.%09dZ %d 0x%x%s %s" % (t, ns, e["pid"], e["tid"], " tid %d" % e["ktid"] if e["ktid"] else "",
                                      names[e["id"]])
    assert l == want, (l, want)
out = [json.loads(l) for l in open(sys.argv[3])][1:-1]
assert len(out) == len(src)
for e, o in zip(src, out):
    for k in ("id", "ts", "pid", "tid", "address"):
        assert o[k] == e[k], (k, e, o)
    assert o.get("ktid", 0) == e["ktid"], (e, o)
PY
fi

expect_rc 2 "bad --pid" "$PTLOG" dump --pid -3 small.ptl
expect_rc 2 "two inputs" "$PTLOG" dump small.ptl small.ptl
expect_rc 2 "no input" "$PTLOG" dump

finish
