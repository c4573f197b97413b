#!/usr/bin/env bash
# bench/live/run-live.sh: live reading (issue 28). Run by `bench/run live`;
# see bench/README.md, "Live reading".
#
#   run-live.sh --build DIR --results DIR --work DIR [--smoke]
#               [--rates "10000 100000 1000000"] [--seconds S] [--intervals "100 20"]
#
# 1. Event-to-line latency: bench_live emit RATE S records RATE events/s,
#    each carrying the CLOCK_REALTIME time of its posix_trace_event call;
#    bench_live lat takes, for every dump line, its arrival time minus that
#    time (p50, p99, max), for
#      pipe:   ptlog record -o - -- bench_live emit | ptlog dump - | bench_live lat
#      follow: ptlog record -o F -- bench_live emit &  ptlog dump --follow F | bench_live lat
#    at each rate and flush interval (TRACELOG_FLUSH_INTERVAL_MS, read by the
#    recording ptlog: the flusher writes a partial chunk this often).
# 2. The cost of following: CPU time (user+system, /usr/bin/time) per event
#    of `ptlog dump --follow F >/dev/null` while F is recorded at the
#    highest rate, next to `ptlog dump F >/dev/null` of the finished file.
# Self-checks (exit 1): every pipeline shows every event (lines = events of
# the log, read back once finished). Latency targets (250 ms) are reported,
# not failures.
# 3. LTTng live, when lttng-relayd and babeltrace2 are installed (not in
#    --smoke): bench/live/lttng_live.c (built here against liblttng-ust) records
#    the same events as bench_live emit through the tracepoint bench:event
#    into a live session whose live timer is the flush interval; babeltrace2
#    --input-format=lttng-live reads it through lttng-relayd; bench_live lat
#    --from babeltrace2 takes the same latency. Skipped with a note when
#    LTTng is missing or an LTTng daemon this script did not start runs.
set -euo pipefail

build="" results="" work="" smoke=0 rates="" seconds="" intervals=""
while (($#)); do
    case $1 in
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --smoke) smoke=1 ;;
    --rates) rates=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --intervals) intervals=$2; shift ;;
    *) echo "run-live.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-live.sh --build DIR --results DIR --work DIR [--smoke] [--rates LIST] [--seconds S] [--intervals LIST]" >&2
    exit 2
fi
if ((smoke)); then
    rates=${rates:-10000} seconds=${seconds:-1} intervals=${intervals:-100}
else
    rates=${rates:-"10000 100000 1000000"} seconds=${seconds:-3} intervals=${intervals:-"100 20"}
fi
ptlog=$build/tools/ptlog
live=$build/bench/bench_live
json=$results/live.json
: >"$json"
mkdir -p "$work"
log=$work/live.ptl
failed=0

# check_lines LABEL LINES: the pipeline showed every event of $log (its user events: "live").
check_lines() {
    local want
    want=$("$ptlog" dump "$log" | grep -c ' live ' || true)
    if [[ $2 != "$want" ]]; then
        echo "run-live.sh: $1: $2 lines shown, the log holds $want events" >&2
        failed=1
    fi
}

lines_of() { sed -n 's/.* lines *\([0-9]*\) .*/\1/p' <<<"$1"; }

echo "event-to-line latency (ms; target: p99 < 250 at every rate)"
for interval in $intervals; do
    for rate in $rates; do
        label="pipe   ${rate}/s flush ${interval} ms"
        out=$(TRACELOG_FLUSH_INTERVAL_MS=$interval "$ptlog" record -q -o - -- "$live" emit "$rate" "$seconds" |
            tee "$log" | "$ptlog" dump - | "$live" lat --json "$json" --label "$label")
        echo "$out"
        check_lines "$label" "$(lines_of "$out")"

        label="follow ${rate}/s flush ${interval} ms"
        rm -f "$log"
        TRACELOG_FLUSH_INTERVAL_MS=$interval "$ptlog" record -q -o "$log" -- "$live" emit "$rate" "$seconds" &
        rec=$!
        for _ in $(seq 200); do [[ -s $log ]] && break; sleep 0.01; done
        out=$("$ptlog" dump --follow "$log" | "$live" lat --json "$json" --label "$label")
        wait "$rec"
        echo "$out"
        check_lines "$label" "$(lines_of "$out")"
    done
done

# ---- LTTng live: lttng_live (bench:event, the same payload) under a live session, read by
# babeltrace2 --input-format=lttng-live through lttng-relayd; the live timer is the flush interval.
lttng_live_part() {
    local tool
    for tool in lttng lttng-sessiond lttng-relayd babeltrace2; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "LTTng live: skipped ($tool not installed; bench/run --install-lttng)"
            return 0
        fi
    done
    if ((smoke)); then
        echo "LTTng live: skipped in --smoke"
        return 0
    fi
    if pgrep -x lttng-sessiond >/dev/null || pgrep -x lttng-relayd >/dev/null; then
        echo "LTTng live: skipped (an lttng-sessiond or lttng-relayd this script did not start is running)"
        return 0
    fi
    local lw=$work/lttng-live here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    mkdir -p "$lw"
    if ! cc -O2 -I"$here/../lttng" -I"$here" -c "$here/../lttng/tp.c" -o "$lw/tp.o" ||
        ! cc -O2 -I"$here/../lttng" -I"$here" "$here/lttng_live.c" "$lw/tp.o" -o "$lw/lttng_live" \
            -llttng-ust -ldl -lpthread; then
        echo "LTTng live: skipped (cannot build lttng_live: liblttng-ust-dev missing?)"
        return 0
    fi
    export LTTNG_HOME=$lw/home
    rm -rf "$LTTNG_HOME" "$lw/relay"
    mkdir -p "$LTTNG_HOME"
    lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
    lttng-relayd -o "$lw/relay" >/dev/null 2>&1 &
    local relayd=$! sessiond rc=0 interval rate label out want
    for _ in $(seq 100); do [[ -s /var/run/lttng/lttng-sessiond.pid || -s $LTTNG_HOME/.lttng/lttng-sessiond.pid ]] && break; sleep 0.05; done
    sessiond=$(pgrep -n -x lttng-sessiond || true)
    sleep 0.5 # the relay daemon's listening ports
    echo "LTTng live (lttng-relayd, babeltrace2 --input-format=lttng-live; live timer = flush interval)"
    for interval in $intervals; do
        for rate in $rates; do
            label="lttng  ${rate}/s live timer ${interval} ms"
            lttng create live --live=$((interval * 1000)) >/dev/null
            lttng enable-channel -u -s live --subbuf-size=2M --num-subbuf=8 ch >/dev/null
            lttng enable-event -u -s live -c ch bench:event >/dev/null
            lttng start live >/dev/null
            timeout 300 babeltrace2 --input-format=lttng-live "net://localhost/host/$(hostname)/live" 2>/dev/null |
                "$live" lat --from babeltrace2 --json "$json" --label "$label" >"$lw/lat.txt" &
            local reader=$!
            sleep 0.5 # babeltrace2 attached (events from before are read too: the trace starts at start)
            "$lw/lttng_live" "$rate" "$seconds"
            sleep $((2 * interval / 1000)).$(printf '%03d' $((2 * interval % 1000)))
            lttng stop live >/dev/null
            local discarded
            discarded=$(lttng list live | awk '/Discarded events:/ { s += $3 } END { print s + 0 }')
            lttng destroy live >/dev/null
            wait "$reader" || rc=1
            out=$(cat "$lw/lat.txt")
            want=$((rate * ${seconds%.*}))
            echo "$out  (of $want, $discarded discarded)"
        done
    done
    kill "$relayd" 2>/dev/null || true
    [[ -n $sessiond ]] && kill "$sessiond" 2>/dev/null || true
    wait "$relayd" 2>/dev/null || true
    unset LTTNG_HOME
    return "$rc"
}

# cpu_of CMD...: user+system CPU seconds of CMD (its output thrown away).
cpu_of() {
    /usr/bin/time -f '%U %S' -o "$work/time.txt" "$@" >/dev/null
    awk '{ printf "%.3f", $1 + $2 }' "$work/time.txt"
}

top_rate=${rates##* }
echo
echo "the cost of following, ${top_rate} events/s for ${seconds} s (CPU ns per event, user+system)"
rm -f "$log"
"$ptlog" record -q -o "$log" -- "$live" emit "$top_rate" "$seconds" &
rec=$!
for _ in $(seq 200); do [[ -s $log ]] && break; sleep 0.01; done
follow_cpu=$(cpu_of "$ptlog" dump --follow "$log")
wait "$rec"
events=$("$ptlog" dump "$log" | wc -l)
whole_cpu=$(cpu_of "$ptlog" dump "$log")
awk -v f="$follow_cpu" -v w="$whole_cpu" -v n="$events" -v j="$json" 'BEGIN {
    printf "dump --follow while recorded  %8.1f ns/event (%s s CPU for %d events)\n", f * 1e9 / n, f, n
    printf "dump of the finished file     %8.1f ns/event (%s s CPU)\n", w * 1e9 / n, w
    printf "{\"label\": \"cpu\", \"events\": %d, \"follow_ns\": %.1f, \"whole_ns\": %.1f}\n", n, f * 1e9 / n, w * 1e9 / n >>j
}'

echo
lttng_live_part || failed=1
rm -f "$log" "$work/time.txt"
exit "$failed"
