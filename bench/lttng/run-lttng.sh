#!/usr/bin/env bash
# bench/lttng/run-lttng.sh: tracelog next to LTTng-UST (recording) and
# babeltrace2 (reading), issue 6. Run by `bench/run lttng`; see bench/README.md.
#
#   run-lttng.sh --build DIR --results DIR --work DIR [--events N] [--runs N]
#                [--seconds S] [--rates R1,R2,...] [--read-events N]
#                [--analyzer-events N] [--tight-events N] [--no-cost] [--no-tight]
#                [--no-sustained] [--no-read]
#   run-lttng.sh --install      apt-get install what it needs, and exit
#
# Needs lttng, lttng-sessiond, babeltrace2 and liblttng-ust-dev (and
# python3-bt2 for the Python analyzer); without them it prints why it is
# skipped and exits 0. It starts its own lttng-sessiond (pinned to CPU B,
# where tracelog's flusher runs; traces under a private LTTNG_HOME in
# --work) and stops it at the end; it refuses to run beside a session
# daemon it did not start.
#
# Measures, in the same run (tracelog first, then LTTng, same sizes):
#  - cost per event, payloads 16/64/256 B, 1 and 2 threads: bench_event
#    (FLUSH stream with log) and lttng_event (a session with per-CPU
#    buffers of the same size as tracelog's stream, discard mode), plus
#    LTTng with the vpid, vtid and ip contexts (what every tracelog event
#    records); a filtered-out event (tracelog filter; LTTng filter
#    expression) and a tracepoint no session enabled;
#  - the tight loop of issue 11 (--tight-events events of 16 B per thread,
#    1 and 2 threads, as fast as they can, nothing paced): tracelog with its
#    default stream (bench_event's tight rows) and LTTng-UST with its default
#    channel (4 x 512 KiB sub-buffers per user, discard mode): ns per event
#    per thread, and the share of events kept (LTTng: issued - discarded);
#    each with the flusher / consumer daemon on CPU B, then free to run on
#    either CPU;
#  - the sustained zero-loss rate (same pacing) and the bytes per event on
#    disk of the same events (.ptl file; CTF trace directory);
#  - reading the same --read-events events (10M): ptlog dump and convert
#    --to jsonl against babeltrace2's text output and -o dummy; typed events
#    (net_rx.h: ptlog dump with fields and --hex against babeltrace2's text
#    of the same fields in a CTF trace); the C
#    analyzer (samples/offline_analyzer) against bt2_count.py (babeltrace2's
#    Python bindings) on --analyzer-events events.
# Results: <results>/lttng.json and a table. Exit 1 only when a step fails
# (a program crashes, an event count does not add up).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../timing.sh
source "$here/../timing.sh"

apt_packages=(lttng-tools liblttng-ust-dev babeltrace2 python3-bt2)

build="" results="" work="" events=1M runs=5 seconds=10 rates="2,4,6,8,10,12,15,20"
read_events=10M analyzer_events=1M tight_events=5M cost=1 tight=1 sustained=1 reading=1
while (($#)); do
    case $1 in
    --install)
        export DEBIAN_FRONTEND=noninteractive
        sudo=""
        if [[ $(id -u) -ne 0 ]]; then sudo=sudo; fi
        $sudo apt-get update
        $sudo apt-get install -y --no-install-recommends "${apt_packages[@]}"
        exit 0
        ;;
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --events) events=$2; shift ;;
    --runs) runs=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --rates) rates=$2; shift ;;
    --read-events) read_events=$2; shift ;;
    --analyzer-events) analyzer_events=$2; shift ;;
    --tight-events) tight_events=$2; shift ;;
    --no-cost) cost=0 ;;
    --no-tight) tight=0 ;;
    --no-sustained) sustained=0 ;;
    --no-read) reading=0 ;;
    *) echo "run-lttng.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-lttng.sh --build DIR --results DIR --work DIR [options] | --install" >&2
    exit 2
fi

# ---- what is installed -----------------------------------------------------
missing=()
for tool in lttng lttng-sessiond babeltrace2; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ! echo '#include <lttng/tracepoint.h>' | cc -E -x c - >/dev/null 2>&1; then
    missing+=("lttng/tracepoint.h (liblttng-ust-dev)")
fi
if ((${#missing[@]})); then
    echo "SKIPPED: the LTTng comparison needs ${missing[*]}."
    echo "         Install them with: bench/run --install-lttng   (apt-get install ${apt_packages[*]})"
    exit 0
fi
running=$( (ps -C lttng-sessiond -o pid=,stat= || true) | awk '$2 !~ /^Z/ { print $1 }' | paste -sd' ' -)
if [[ -n $running ]]; then
    echo "SKIPPED: an lttng-sessiond this script did not start is running (pid $running);"
    echo "         the comparison starts its own and would share its /var/run/lttng. Stop it and run again."
    exit 0
fi
python=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import bt2' 2>/dev/null; then
        python=$p
        break
    fi
done
json_python=${python:-$(command -v python3 || true)}
if [[ -z $json_python ]]; then
    echo "SKIPPED: the LTTng comparison needs python3 to put its results together."
    exit 0
fi

# ---- CPUs: A (producer) and B (second producer, flusher / consumer daemon) --
allowed=$(taskset -pc $$ | sed 's/.*: *//')
cpus=()
IFS=, read -r -a parts <<<"$allowed"
for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then
        for ((c = ${part%-*}; c <= ${part#*-}; c++)); do cpus+=("$c"); done
    else
        cpus+=("$part")
    fi
done
cpu_a=${cpus[-1]}
cpu_b=${cpus[-2]:-$cpu_a}

# ---- build the LTTng program -------------------------------------------------
lw=$work/lttng
mkdir -p "$lw" "$results"
cflags=(-O3 -DNDEBUG -g -std=gnu11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -I"$here")
cc "${cflags[@]}" -c "$here/tp.c" -o "$lw/tp.o"
cc "${cflags[@]}" -c "$here/lttng_event.c" -o "$lw/lttng_event.o"
cc -o "$lw/lttng_event" "$lw/lttng_event.o" "$lw/tp.o" -llttng-ust -ldl -lpthread
app=$lw/lttng_event
ptlog=$build/tools/ptlog
bench_event=$build/bench/bench_event
analyzer=$build/samples/offline_analyzer

# ---- the session daemon ---------------------------------------------------------
export LTTNG_HOME=$lw/home
rm -rf "$LTTNG_HOME" "$lw/traces"
mkdir -p "$LTTNG_HOME" "$lw/traces"
sessiond_pid=""
cleanup() {
    if [[ -n $sessiond_pid ]]; then
        kill "$sessiond_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$sessiond_pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    rm -rf "$lw/traces" "$lw"/*.ptl
}
trap cleanup EXIT
taskset -c "$cpu_b" lttng-sessiond --daemonize --no-kernel
for _ in $(seq 50); do
    [[ -s /var/run/lttng/lttng-sessiond.pid ]] && break
    sleep 0.1
done
sessiond_pid=$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null || true)
if [[ -z $sessiond_pid ]]; then
    echo "run-lttng.sh: lttng-sessiond did not start" >&2
    exit 1
fi
echo "lttng-sessiond pid $sessiond_pid on CPU $cpu_b; producer CPU $cpu_a; LTTNG_HOME=$LTTNG_HOME"

stream_bytes=$((64 << 20)) # tracelog's stream size: each thread's lane holds it
subbuf=$((stream_bytes / 4))

# session NAME [FILTER] [CONTEXT...]: a started session recording bench:event
session() {
    local name=$1 filter=${2:-}
    shift 2 || shift $#
    lttng create "$name" --output="$lw/traces/$name" >/dev/null
    lttng enable-channel -u -s "$name" --discard --subbuf-size="$subbuf" --num-subbuf=4 ch >/dev/null
    if [[ -n $filter ]]; then
        lttng enable-event -u -s "$name" -c ch bench:event --filter "$filter" >/dev/null
    else
        lttng enable-event -u -s "$name" -c ch bench:event >/dev/null
    fi
    lttng enable-event -u -s "$name" -c ch bench:fields >/dev/null
    lttng enable-event -u -s "$name" -c ch bench:net_rx >/dev/null
    local ctx
    for ctx in "$@"; do
        lttng add-context -u -s "$name" -c ch -t "$ctx" >/dev/null
    done
    lttng start "$name" >/dev/null
}
# finish NAME: stops and destroys it; sets DISCARDED and TRACE_BYTES, keeps the trace in $lw/traces/NAME
finish() {
    local name=$1
    lttng stop "$name" >/dev/null
    DISCARDED=$(lttng list "$name" | awk '/Discarded events:/ { s += $3 } END { print s + 0 }')
    lttng destroy "$name" >/dev/null
    TRACE_BYTES=$(du -sb "$lw/traces/$name" | cut -f1)
}
# count_trace DIR: events and discarded events as babeltrace2 counts them
count_trace() {
    babeltrace2 "$1" -c sink.utils.counter 2>/dev/null | awk '
        /Event messages/ { e = $1 } /Discarded event messages/ { d = $1 } END { print e + 0, d + 0 }'
}

# Results of an earlier run must not be reported as this one's.
rm -f "$lw"/tracelog_cost.json "$lw"/lttng_cost*.json "$lw"/lttng_disabled.json "$lw"/lttng_filtered.json \
    "$lw"/tracelog_sustained.json
if ((cost)); then
echo
echo "== recording cost: tracelog (bench_event, same run)"
"$bench_event" --no-sustained --runs "$runs" --events "$events" --dir "$lw" --json "$lw/tracelog_cost.json" |
    grep -E '^(clock_gettime|posix_trace_event|2 threads)' || true

echo "== recording cost: LTTng-UST"
session cost ""
"$app" cost --events "$events" --runs "$runs" --buffer-bytes "$stream_bytes" >"$lw/lttng_cost.json"
"$app" cheap --events "$events" --runs "$runs" --tp disabled >"$lw/lttng_disabled.json"
finish cost
echo "{\"discarded\": $DISCARDED}" >"$lw/lttng_cost_discarded.json"
rm -rf "$lw/traces/cost"

session costctx "" vpid vtid ip
"$app" cost --events "$events" --runs "$runs" --buffer-bytes "$stream_bytes" >"$lw/lttng_cost_ctx.json"
finish costctx
echo "{\"discarded\": $DISCARDED}" >"$lw/lttng_cost_ctx_discarded.json"
rm -rf "$lw/traces/costctx"

session filtered '$ctx.vtid == 0'
"$app" cheap --events "$events" --runs "$runs" >"$lw/lttng_filtered.json"
finish filtered
rm -rf "$lw/traces/filtered"
fi

# ---- tight loop ------------------------------------------------------------------
rm -f "$lw"/tracelog_tight.json "$lw"/lttng_tight_*.json
if ((tight)); then
    echo
    echo "== tight loop (issue 11): $tight_events events of 16 B per thread, nothing paced"
    echo "tracelog: bench_event, default stream (8 MiB per thread), FLUSH + APPEND log"
    "$bench_event" --no-sustained --no-cost --runs "$runs" --tight-events "$tight_events" --dir "$lw" \
        --json "$lw/tracelog_tight.json" | grep -E '^tight loop, . thread\(s\)' || true
    echo "LTTng-UST: the default channel (4 x 512 KiB sub-buffers per user), discard mode"
    # Like bench_event's two flusher placements: the consumer daemon on CPU B, then free to run on A or B.
    for where in b either; do
        if [[ $where == either ]]; then
            for p in $(pgrep -f lttng-consumerd || true); do
                taskset -a -p -c "$cpu_a,$cpu_b" "$p" >/dev/null
            done
        fi
        for t in 1 2; do
            lttng create "tight$t" --output="$lw/traces/tight$t" >/dev/null
            lttng enable-event -u -s "tight$t" bench:event >/dev/null
            lttng start "tight$t" >/dev/null
            line=$("$app" tight --threads "$t" --events "$tight_events" --runs "$runs")
            finish "tight$t"
            rm -rf "$lw/traces/tight$t"
            echo "${line%\}}, \"discarded\": $DISCARDED}" >"$lw/lttng_tight_${where}_$t.json"
            "$json_python" -c '
import json, statistics, sys
d = json.load(open(sys.argv[1]))
print("tight loop, %d thread(s), LTTng, consumer daemon on %s: %.2f ns per event per thread [%.2f-%.2f], kept %.2f %% (%d of %d discarded), cpu share %.0f %%" % (
    d["threads"], sys.argv[2], statistics.median(d["ns"]), min(d["ns"]), max(d["ns"]),
    100.0 * (d["issued"] - d["discarded"]) / d["issued"], d["discarded"], d["issued"], 100 * d["cpu_share"]))
' "$lw/lttng_tight_${where}_$t.json" "$([[ $where == b ]] && echo "CPU B" || echo "either CPU")"
        done
    done
    for p in $(pgrep -f lttng-consumerd || true); do
        taskset -a -p -c "$cpu_b" "$p" >/dev/null
    done
fi

# ---- sustained rate --------------------------------------------------------------
: >"$lw/lttng_sustained.jsonl"
if ((sustained)); then
    echo "== sustained rate: tracelog FLUSH (bench_event --no-cost)"
    "$bench_event" --no-cost --seconds "$seconds" --rates "$rates" --dir "$lw" --json "$lw/tracelog_sustained.json" |
        grep 'target:' || true
    echo "== sustained rate: LTTng discard mode"
    IFS=, read -r -a rate_list <<<"$rates"
    for r in "${rate_list[@]}"; do
        session sus ""
        line=$("$app" paced --rate "$r" --seconds "$seconds" --buffer-bytes "$stream_bytes")
        finish sus
        rm -rf "$lw/traces/sus"
        echo "${line%\}}, \"discarded\": $DISCARDED, \"trace_bytes\": $TRACE_BYTES}" >>"$lw/lttng_sustained.jsonl"
        printf '  %5s M ev/s target: %s, discarded %s, %s bytes\n' "$r" \
            "$(sed 's/.*"achieved_mev_s": \([0-9.]*\).*/\1/' <<<"$line") M ev/s achieved" "$DISCARDED" "$TRACE_BYTES"
    done
fi

# ---- sizes and reading ---------------------------------------------------------------
fail=0
: >"$lw/sizes.jsonl"
: >"$lw/reading.jsonl"
gen_both() { # gen_both NAME EVENTS PAYLOAD [fields|typed]: the same events as a .ptl and as a CTF trace
    local name=$1 n=$2 p=$3 tp=${4:-event}
    if [[ $tp == event ]]; then
        "$bench_event" --generate "$n" --payload "$p" --out "$lw/$name.ptl" >/dev/null
    fi
    session "$name" '' >/dev/null
    if [[ $tp == fields ]]; then
        "$app" generate --events "$n" --payload 16 --buffer-bytes "$stream_bytes" --tp fields >/dev/null
    elif [[ $tp == typed ]]; then # the .ptl log: ptlog's import of the same events as JSON Lines
        "$app" generate --events "$n" --buffer-bytes "$stream_bytes" --tp typed --jsonl "$lw/$name.jsonl" >/dev/null
        "$ptlog" convert "$lw/$name.jsonl" --to ptl -o "$lw/$name.ptl"
        rm -f "$lw/$name.jsonl"
    else
        "$app" generate --events "$n" --payload "$p" --buffer-bytes "$stream_bytes" >/dev/null
    fi
    finish "$name"
    local counts
    read -r -a counts <<<"$(count_trace "$lw/traces/$name")"
    local ptl_bytes=0 ptl_events=0
    if [[ $tp != fields ]]; then
        ptl_bytes=$(stat -c %s "$lw/$name.ptl")
        ptl_events=$("$ptlog" dump --no-system "$lw/$name.ptl" | wc -l)
    fi
    echo "{\"name\": \"$name\", \"tracepoint\": \"$tp\", \"payload\": $p, \"events\": $(bu_count "$n"), \"ptl_bytes\": $ptl_bytes, \"ptl_events\": $ptl_events, \"ctf_bytes\": $TRACE_BYTES, \"ctf_data_bytes\": $(find "$lw/traces/$name" -type f -name 'ch_*' ! -name '*.idx' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'), \"ctf_events\": ${counts[0]}, \"ctf_discarded\": ${counts[1]}, \"lttng_discarded\": $DISCARDED}" >>"$lw/sizes.jsonl"
    if [[ ${counts[0]} != "$(bu_count "$n")" ]]; then
        echo "run-lttng.sh: SELF-CHECK FAILED: the CTF trace $name holds ${counts[0]} events, ${counts[1]} discarded, of $n" >&2
        fail=1
    fi
    if [[ $tp != fields && $ptl_events != "$(bu_count "$n")" ]]; then
        echo "run-lttng.sh: SELF-CHECK FAILED: $name.ptl holds $ptl_events events of $n" >&2
        fail=1
    fi
}
bu_count() { awk -v s="$1" 'BEGIN { m = 1; if (s ~ /[kK]$/) m = 1e3; if (s ~ /[mM]$/) m = 1e6; sub(/[kKmM]$/, "", s); printf "%d", s * m }'; }
time_one() { # time_one KEY EVENTS RUNS CMD...
    local key=$1 n=$2 r=$3
    shift 3
    if ! bt_time "$key" "$r" "$@"; then
        echo "run-lttng.sh: $* failed" >&2
        fail=1
        return
    fi
    echo "{\"key\": \"$key\", \"events\": $n, \"median_s\": $BT_MEDIAN, \"min_s\": $BT_MIN, \"max_s\": $BT_MAX, \"cpu_s\": ${BT_CPU:-0}, \"runs_s\": [$(printf '%s\n' $BT_RUNS | paste -sd, -)]}" >>"$lw/reading.jsonl"
    printf '  %-40s %8.3f s  (%s-%s)\n' "$key" "$BT_MEDIAN" "$BT_MIN" "$BT_MAX"
}

if ((reading)); then
    echo "== bytes per event on disk (same events in both formats)"
    for p in 64 256; do
        gen_both "size$p" 1M "$p"
        rm -rf "$lw/traces/size$p" "$lw/size$p.ptl"
    done
    echo "== reading: $read_events events (16 B payloads) in both formats"
    gen_both read "$read_events" 16
    gen_both readfields "$read_events" 16 fields
    n=$(bu_count "$read_events")
    rr=$((runs < 3 ? runs : 3)) # babeltrace2 takes minutes on 10M events: 3 runs
    time_one ptlog_dump "$n" "$runs" "$ptlog" dump "$lw/read.ptl"
    time_one ptlog_jsonl "$n" "$runs" "$ptlog" convert "$lw/read.ptl" --to jsonl
    time_one ptlog_info_full "$n" "$runs" "$ptlog" info "$lw/read.ptl"
    time_one offline_analyzer "$n" "$runs" "$analyzer" "$lw/read.ptl"
    time_one bt2_text "$n" "$rr" babeltrace2 "$lw/traces/read"
    time_one bt2_dummy "$n" "$rr" babeltrace2 "$lw/traces/read" -o dummy
    time_one bt2_text_fields "$n" "$rr" babeltrace2 "$lw/traces/readfields"
    time_one bt2_dummy_fields "$n" "$rr" babeltrace2 "$lw/traces/readfields" -o dummy
    rm -rf "$lw/traces/read" "$lw/traces/readfields" "$lw/read.ptl"
    echo "== typed: $read_events bench:net_rx / net.rx events (net_rx.h) in both formats"
    gen_both readtyped "$read_events" 40 typed
    time_one ptlog_dump_typed "$n" "$runs" "$ptlog" dump "$lw/readtyped.ptl"
    time_one ptlog_dump_typed_hex "$n" "$runs" "$ptlog" dump --hex "$lw/readtyped.ptl"
    time_one bt2_text_typed "$n" "$rr" babeltrace2 "$lw/traces/readtyped"
    "$ptlog" dump --limit 2 "$lw/readtyped.ptl" | sed 's/^/  ptlog dump: /'
    (set +o pipefail; babeltrace2 "$lw/traces/readtyped" | head -n 2) | sed 's/^/  babeltrace2: /'
    rm -rf "$lw/traces/readtyped" "$lw/readtyped.ptl"
    if [[ -n $python ]]; then
        echo "== analyzer: $analyzer_events events, per-type statistics"
        gen_both ana "$analyzer_events" 16
        na=$(bu_count "$analyzer_events")
        time_one analyzer_c "$na" "$rr" "$analyzer" "$lw/ana.ptl"
        time_one analyzer_bt2_python "$na" "$rr" "$python" "$here/bt2_count.py" "$lw/traces/ana"
        rm -rf "$lw/traces/ana" "$lw/ana.ptl"
    else
        echo "(no python3 with the bt2 module: the Python analyzer comparison is skipped; apt-get install python3-bt2)"
    fi
fi

# ---- results ------------------------------------------------------------------------
"$json_python" "$here/report.py" --work "$lw" --json "$results/lttng.json" \
    --versions "$(lttng --version | head -n1); $(babeltrace2 --version | head -n1)" || fail=1
exit "$fail"
