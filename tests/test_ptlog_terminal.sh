#!/bin/bash
# ptlog on a terminal (script(1) gives it a pseudo-terminal): colour and
# NO_COLOR, and the progress line, which never lands inside output lines. It is shown only when stderr is a terminal that
# the command's output does not share, and erased before any message, so a
# message starts its own line. The input is a pipe that pauses 1.3 s after
# 70,001 lines, so that progress is due (runs longer than a second) at the
# update after 131,072 events.
. "$(dirname "$0")/ptlog/lib.sh"
if ! command -v script >/dev/null; then
    echo "skipped: script(1) (util-linux) is not installed"
    exit 77
fi

# Colour: on by default on a terminal; NO_COLOR set to anything non-empty turns the
# default off (https://no-color.org); --color=always wins over NO_COLOR.
make_small
colour_lines() { # ENV... : dump small.ptl on a terminal, lines holding an escape sequence
    env "$@" script -qec "\"$PTLOG\" dump small.ptl" /dev/null | grep -c $'\033\\['
}
n=$(colour_lines -u NO_COLOR)
[ "$n" = 8 ] && ok || bad "colour on a terminal: $n of 8 lines coloured"
n=$(colour_lines NO_COLOR=1)
[ "$n" = 0 ] && ok || bad "NO_COLOR=1: $n lines coloured"
n=$(colour_lines NO_COLOR=0)
[ "$n" = 0 ] && ok || bad "NO_COLOR=0 (any non-empty value): $n lines coloured"
n=$(colour_lines NO_COLOR=)
[ "$n" = 8 ] && ok || bad "NO_COLOR empty is ignored: $n of 8 lines coloured"
n=$(env NO_COLOR=1 script -qec "\"$PTLOG\" dump --color=always small.ptl" /dev/null | grep -c $'\033\\[')
[ "$n" = 8 ] && ok || bad "--color=always with NO_COLOR: $n of 8 lines coloured"
env NO_COLOR=1 script -qec "\"$PTLOG\" dump small.ptl" /dev/null | tr -d '\r' >got
"$PTLOG" dump small.ptl >want
expect_same "NO_COLOR: the plain text" want got

awk 'BEGIN {
    print "{\"attributes\":{\"trace_name\":\"p\"},\"event_types\":[{\"id\":1,\"name\":\"tick\"}]}"
    for (i = 0; i < 140000; i++)
        printf "{\"id\":1,\"ts\":%d,\"pid\":1,\"tid\":2}\n", 1000 + i
}' >p.jsonl
{ cat p.jsonl; echo '{"id":1,"ts":5,}'; } >bad.jsonl

# on_tty FILE.jsonl 'ARGS': runs ptlog ARGS on a terminal, reading FILE from the slow pipe;
# what the terminal received goes to tty.raw.
on_tty() {
    script -qec "sh -c '{ head -n 70001 $1; sleep 1.3; tail -n +70002 $1; } | \"$PTLOG\" $2'" /dev/null >tty.raw
}
# What a terminal shows, line by line: the text after the last carriage return, erasures removed.
render() {
    sed 's/\r$//; s/.*\r//; s/\x1b\[K//g' "$1"
}

# Output on the terminal: no progress at all, the dump exactly.
on_tty p.jsonl 'dump --relative --color=never -'
"$PTLOG" dump --relative p.jsonl >want
render tty.raw >got
expect_same "dump on the terminal: the lines and nothing else" want got
grep -aq 'ptlog:' tty.raw && bad "dump on the terminal: a progress line was printed: $(grep -a -m1 'ptlog:' tty.raw | od -c | head -3)" || ok

# Output to a file: progress on the terminal, erased at the end.
on_tty p.jsonl 'convert - --to jsonl -o out.jsonl'
grep -aq $'\rptlog: 131072 events' tty.raw && ok || bad "convert -o FILE on a terminal shows no progress: $(od -c tty.raw | head -3)"
[ -z "$(render tty.raw | tr -d '\n')" ] && ok || bad "the progress line was not erased: $(render tty.raw | od -c | head -3)"
cmp -s out.jsonl <("$PTLOG" convert p.jsonl --to jsonl) && ok || bad "convert with progress: output differs"
on_tty p.jsonl 'dump -o out.txt -'
grep -aq $'\rptlog: 131072 events' tty.raw && ok || bad "dump -o FILE on a terminal shows no progress"

# A message while progress is shown starts a line of its own.
on_tty bad.jsonl 'convert - --to jsonl -o out2.jsonl'
grep -aq $'\rptlog: 131072 events' tty.raw && ok || bad "no progress before the error"
render tty.raw | grep -v '^$' >got
printf '%s\n' "ptlog: <stdin>:140002:16: string or '}' expected near '}'" >want
expect_same "the error message is a whole line" want got
[ -e out2.jsonl ] && bad "output left after the error" || ok

# Standard error not a terminal: no progress.
script -qec "sh -c '{ head -n 70001 p.jsonl; sleep 1.3; tail -n +70002 p.jsonl; } | \"$PTLOG\" convert - --to jsonl -o out.jsonl 2>err.txt'" /dev/null >tty.raw
[ -s err.txt ] && bad "progress written to a file: $(od -c err.txt | head -2)" || ok

# Output on one terminal, stderr on another: progress on the second only.
if command -v python3 >/dev/null; then
    python3 - "$PTLOG" <<'PY' && ok || bad "two terminals"
import os, subprocess, sys, select, tty
out_m, out_s = os.openpty()
err_m, err_s = os.openpty()
tty.setraw(out_s)  # no echo or line discipline work: fast, and the bytes as written
tty.setraw(err_s)
feed = subprocess.Popen(["sh", "-c", "head -n 70001 p.jsonl; sleep 1.3; tail -n +70002 p.jsonl"], stdout=subprocess.PIPE)
p = subprocess.Popen([sys.argv[1], "dump", "--color=never", "-"], stdin=feed.stdout, stdout=out_s, stderr=err_s)
feed.stdout.close()
os.close(out_s); os.close(err_s)
got = {out_m: bytearray(), err_m: bytearray()}
open_fds = [out_m, err_m]
while open_fds:
    r, _, _ = select.select(open_fds, [], [], 30)
    if not r:
        break
    for fd in r:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            data = b""
        if not data:
            open_fds.remove(fd)
        got[fd] += data
assert p.wait() == 0 and feed.wait() == 0
assert b"ptlog:" not in got[out_m], "progress on the output terminal"
assert got[out_m].count(b"\n") == 140000, got[out_m].count(b"\n")
assert b"\rptlog: 131072 events" in got[err_m], got[err_m][:200]
PY
fi

finish
