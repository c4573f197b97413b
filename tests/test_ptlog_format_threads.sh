#!/bin/bash
# Reading and formatting on several threads: dump, JSON and JSON Lines of
# a seekable .ptl log, read in ranges (tools/ptlog/parts.c: its 21 chunks
# are 11 units, or 21 on 4 threads) or formatted on threads (par.c: --delta, --limit, --begin,
# --end), give the same bytes, warnings and exit status whatever
# PTLOG_FORMAT_THREADS is, with every option whose text depends on the
# events before (--delta, JSON's separating commas, --limit), on typed
# events, thread names, event sets naming other types, payloads that fill a
# batch alone, and a log damaged in its first, a middle or its last unit; a bad PTLOG_FORMAT_THREADS
# is a usage error; the threads run (counted while ptlog waits on a full
# pipe).
. "$(dirname "$0")/ptlog/lib.sh"

# 20000 events over 5 threads (4 named, one renamed half-way), 3 typed types (one with an event set
# naming the others and unnamed ids), an untyped one; every 997th event carries 200 KB of payload.
awk 'BEGIN {
    print "{\"format\":{\"schema\":\"tracelog\",\"version\":1},\"attributes\":{\"trace_name\":\"par\",\"creation_time_ns\":1714564800000000000},\"event_types\":[" \
        "{\"id\":1,\"name\":\"net.rx\",\"schema\":\"u32 len; u16 port; char[8] iface; f64 lat\"}," \
        "{\"id\":2,\"name\":\"set\",\"schema\":\"i32 n; eventset[1] ids\"}," \
        "{\"id\":3,\"name\":\"blob\"},{\"id\":4,\"name\":\"text msg\",\"schema\":\"char[12] s\"}]}"
    big = ""
    for (k = 0; k < 3200; k++)
        big = big "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    for (i = 0; i < 20000; i++) {
        t = i % 5
        thr = t < 4 ? sprintf(",\"ktid\":%d,\"tname\":\"%s\"", 500 + t, (t == 1 && i > 10000) ? "renamed" : "w" t) : ""
        head = sprintf("{\"ts\":1714564800%09d,\"pid\":42,\"tid\":%d%s", i * 1000 + (i % 3) * 7, 7 + t, thr)
        if (i % 997 == 5)
            data = big
        else if (i % 11 == 3)
            data = sprintf("%08x000000001e%02x0000000000%02x", i, i % 256, i % 3)
        else if (i % 7 == 2)
            data = i % 2 ? "68656c6c6f2022776f726c642200" : "0102"
        else
            data = sprintf("%08x%04x6574683%d000000000000%08x%08x", i, 8000 + i % 3, i % 4, i * 40503 % 65536, i % 1000)
        printf "%s,\"id\":%d,\"data\":\"%s\"}\n", head, i % 997 == 5 ? 3 : i % 11 == 3 ? 2 : i % 7 == 2 ? 4 : 1, data
    }
}' >par.jsonl
expect_rc 0 "par.jsonl to .ptl" "$PTLOG" convert par.jsonl --to ptl -o par.ptl
[ "$(wc -l <par.jsonl)" = 20001 ] && ok || bad "par.jsonl has $(wc -l <par.jsonl) lines"

# Each command's output with the formatting on the reading thread alone is the reference.
commands=(
    "dump par.ptl"
    "dump --delta par.ptl"
    "dump --relative --delta --event net.rx par.ptl"
    "dump --color=always --local par.ptl"
    "dump --hex par.ptl"
    "dump --delta --limit 9000 par.ptl"
    "dump --where len>9000 par.ptl"
    "dump --begin +3ms --end +17ms --delta par.ptl"
    "convert par.ptl --to jsonl -o -"
    "convert par.ptl --to json -o -"
    "convert par.ptl --to json --ts text -o -"
    "convert par.ptl --to json --where len>9000 -o -"
    "convert par.ptl --to jsonl --ts relative --event set -o -"
)
for i in "${!commands[@]}"; do
    # shellcheck disable=SC2086
    PTLOG_FORMAT_THREADS=0 "$PTLOG" ${commands[$i]} >"want.$i" 2>"want.$i.err"
    echo $? >"want.$i.rc"
done
[ "$(wc -l <want.0)" = 20000 ] && ok || bad "dump: $(wc -l <want.0) lines"
grep -q ' (renamed) set { n = [0-9]*, ids = \[net.rx, set, blob, "text msg", event#' want.0 && ok || bad "dump: no renamed thread or event set"
grep -q ' blob 0123456789abcdef0123' want.0 && ok || bad "dump: no large payload"
for n in 1 2 3 16; do
    for i in "${!commands[@]}"; do
        # shellcheck disable=SC2086
        PTLOG_FORMAT_THREADS=$n "$PTLOG" ${commands[$i]} >got 2>got.err
        echo $? >got.rc
        expect_same "PTLOG_FORMAT_THREADS=$n ${commands[$i]}" "want.$i" got
        expect_same "PTLOG_FORMAT_THREADS=$n ${commands[$i]}: stderr" "want.$i.err" got.err
        expect_same "PTLOG_FORMAT_THREADS=$n ${commands[$i]}: exit status" "want.$i.rc" got.rc
    done
done

# Into a file (written through its temporary file), and from a pipe (read on one thread).
expect_rc 0 "-o file" env PTLOG_FORMAT_THREADS=2 "$PTLOG" convert par.ptl --to jsonl -o par.out.jsonl
expect_same "-o file" want.8 par.out.jsonl
run bash -c "cat par.ptl | PTLOG_FORMAT_THREADS=2 '$PTLOG' dump -"
expect_same "from a pipe" want.0 "$T/out"

# A write that fails: exit 4 and one message, as on one thread.
if [ -w /dev/full ]; then
    expect_rc 4 "write error" env PTLOG_FORMAT_THREADS=2 "$PTLOG" convert par.ptl --to jsonl -o /dev/full
    expect_err '^ptlog: /dev/full: cannot write the output: No space left on device$' "write error"
fi

# A damaged chunk in the first unit, in a middle one, in the last, and in two (the units before the first
# damage written from their ranges, the rest read again on one thread): the same events, the same
# warnings in the same order, exit 1.
size=$(stat -c %s par.ptl)
for at in $((size / 50)) $((size / 3)) $((size * 19 / 20)) "$((size / 3)) $((size * 19 / 20))"; do
    cp par.ptl damaged.ptl
    for off in $at; do
        printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of=damaged.ptl bs=1 seek="$off" conv=notrunc 2>/dev/null
    done
    expect_rc 1 "damaged at $at, one thread" env PTLOG_FORMAT_THREADS=0 "$PTLOG" dump damaged.ptl
    cp "$T/out" damaged.txt
    cp "$T/err" damaged.err
    n=$(wc -l <damaged.txt)
    [ "$n" -gt 1000 ] && [ "$n" -lt 20000 ] && ok || bad "damaged log dumped $n lines"
    for n in 1 3; do
        for cmd in dump "convert --to json -o -"; do
            # shellcheck disable=SC2086
            expect_rc 1 "damaged at $at, PTLOG_FORMAT_THREADS=$n $cmd" env PTLOG_FORMAT_THREADS=$n "$PTLOG" $cmd damaged.ptl
            if [ "$cmd" = dump ]; then
                expect_same "damaged at $at, PTLOG_FORMAT_THREADS=$n: events" damaged.txt "$T/out"
            else
                PTLOG_FORMAT_THREADS=0 "$PTLOG" convert --to json -o - damaged.ptl >damaged.json 2>/dev/null
                expect_same "damaged at $at, PTLOG_FORMAT_THREADS=$n: JSON" damaged.json "$T/out"
            fi
            expect_same "damaged at $at, PTLOG_FORMAT_THREADS=$n $cmd: warning" damaged.err "$T/err"
        done
    done
done

# A bad setting is a usage error, checked before any input is read.
for v in x -1 17 1.5 +3 ' 3'; do
    expect_rc 2 "PTLOG_FORMAT_THREADS='$v'" env PTLOG_FORMAT_THREADS="$v" "$PTLOG" dump par.ptl
    re=$(printf '%s' "$v" | sed 's/[][\.*^$+?(){}|]/\\&/g')
    expect_err "^ptlog: PTLOG_FORMAT_THREADS: expected a number of threads from 0 to 16, not '$re'\$" \
        "PTLOG_FORMAT_THREADS='$v'"
done
expect_rc 0 "PTLOG_FORMAT_THREADS empty: the default" env PTLOG_FORMAT_THREADS= "$PTLOG" dump par.ptl
expect_same "PTLOG_FORMAT_THREADS empty" want.0 "$T/out"

# The threads: blocked writing to a full pipe, a dump formatting on threads (--delta) runs 1 + F
# formatter threads, and the chunks are loaded on the reading thread unless PTLOG_READ_AHEAD asks for
# threads (then 1 + F + R).
dump_args=--delta
spare=$(($(nproc) - 1))
default=$((spare < 3 ? spare : 3))
check_threads() { # WANT ENV...
    local want=$1 got
    shift
    got=$(blocked_threads par.ptl "$dump_args" "$@")
    [ "$got" = "$want" ] && ok || bad "$*: ptlog ran $got threads, want $want"
}
if [ -z "${TSAN_OPTIONS:-}" ]; then # ThreadSanitizer's thread of its own (.ci/run sets TSAN_OPTIONS) would count
    check_threads 1 PTLOG_FORMAT_THREADS=0 PTLOG_READ_AHEAD=0
    check_threads 3 PTLOG_FORMAT_THREADS=2
    check_threads 5 PTLOG_FORMAT_THREADS=2 PTLOG_READ_AHEAD=2
    check_threads $((1 + default)) PTLOG_FORMAT_THREADS= PTLOG_READ_AHEAD=
    # A selection that keeps few events (here 0.1 %, 8 MB of text): no formatter thread starts, and the
    # chunks are read ahead.
    dump_args="--delta --event blob"
    check_threads $((1 + default)) PTLOG_FORMAT_THREADS=2 PTLOG_READ_AHEAD=
    check_threads 1 PTLOG_FORMAT_THREADS=2 PTLOG_READ_AHEAD=0
    # A log of fewer events than a batch is formatted on the reading thread (its text, 190 KB in colour,
    # is written from the batch while the threads would still run).
    make_many few 2000
    got=$(blocked_threads few.ptl --color=always PTLOG_FORMAT_THREADS=2 PTLOG_READ_AHEAD=0)
    [ "$got" = 1 ] && ok || bad "a log of 2000 events: ptlog ran $got threads, want 1"
    # Read in ranges, 49 units of 4096 events: blocked writing the first, the F other readers wait for
    # room (the ring holds 2 (F + 1) units), their reader's read ahead left off.
    make_many big 200000
    for f in 1 2; do
        got=$(blocked_threads big.ptl "" PTLOG_FORMAT_THREADS=$f PTLOG_READ_AHEAD=)
        [ "$got" = $((1 + f)) ] && ok || bad "ranges, PTLOG_FORMAT_THREADS=$f: ptlog ran $got threads, want $((1 + f))"
    done
    got=$(blocked_threads big.ptl "" PTLOG_FORMAT_THREADS= PTLOG_READ_AHEAD=)
    [ "$got" = $((1 + default)) ] && ok || bad "ranges, the default: ptlog ran $got threads, want $((1 + default))"
fi
finish
