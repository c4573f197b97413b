#!/usr/bin/env bash
# bench/viewers/run-viewers.sh: ptlog's two trace-viewer outputs on the same log,
# Perfetto's protobuf trace (convert --to perfetto) next to Chrome's JSON
# (convert --to chrome): size on disk, bytes per event and conversion speed.
# Run by `bench/run viewers`; see bench/README.md.
#
#   run-viewers.sh --build DIR --results DIR --work DIR [--smoke] [--events N] [--runs N]
#
# The log: gen_viewers N (default 10M; --smoke: 100k): 8 named threads of a
# service, request:begin/request:end slices around a typed db.query, and an
# untyped 8-byte tick (bench/gen_viewers.c). Each conversion is timed (median
# of --runs after a warm-up, bench/timing.sh) writing a file on the same disk,
# and its CPU time (user + system, /usr/bin/time, one more run) is taken too:
# on a busy machine it is the steadier figure.
# Self-checks (exit 1): both conversions succeed; with protoc installed, the
# Perfetto trace decodes against tests/ptlog/perfetto_trace.proto with one
# track event per event (in --smoke only: the text of 10 M events is large).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../timing.sh
source "$here/../timing.sh"

build="" results="" work="" smoke=0 events="" runs=3
while (($#)); do
    case $1 in
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --smoke) smoke=1 ;;
    --events) events=$2; shift ;;
    --runs) runs=$2; shift ;;
    *) echo "run-viewers.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-viewers.sh --build DIR --results DIR --work DIR [--smoke] [--events N] [--runs N]" >&2
    exit 2
fi
((smoke)) && events=${events:-100k} runs=1
events=${events:-10M}
ptlog=$build/tools/ptlog
mkdir -p "$results" "$work"
log=$work/viewers.ptl pf=$work/viewers.pftrace js=$work/viewers.json
trap 'rm -f "$log" "$pf" "$js"' EXIT

"$build/bench/gen_viewers" "$events" "$log"
n=$("$ptlog" info --quick "$log" | sed -n 's/^events: *//p')
echo "log: $n events, $(stat -c %s "$log") bytes (.ptl)"

fail=0
declare -A secs cpu bytes
for to in perfetto chrome; do
    out=$pf
    [[ $to == chrome ]] && out=$js
    if ! bt_time "$to" "$runs" "$ptlog" convert "$log" --to "$to" -o "$out"; then
        echo "run-viewers.sh: SELF-CHECK FAILED: convert --to $to" >&2
        fail=1
        continue
    fi
    secs[$to]=$BT_MEDIAN
    bytes[$to]=$(stat -c %s "$out")
    cpu[$to]=$( { /usr/bin/time -f '%U %S' "$ptlog" convert "$log" --to "$to" -o "$out" 2>&1 >/dev/null; } | awk 'END { print $1 + $2 }')
done
if ((smoke)) && command -v protoc >/dev/null; then
    got=$(protoc -I"$root/tests/ptlog" --decode=perfetto.protos.Trace perfetto_trace.proto <"$pf" | grep -c '^  track_event {')
    # one per event, and one per slice left open at the end
    if ((got < n || got > n + 16)); then
        echo "run-viewers.sh: SELF-CHECK FAILED: $got track events for $n events" >&2
        fail=1
    fi
fi
((fail)) && exit 1

printf '\n%-10s %14s %10s %10s %14s %10s %16s\n' output bytes B/event seconds events/s "CPU s" "events/CPU-s"
for to in perfetto chrome; do
    awk -v t="$to" -v b="${bytes[$to]}" -v s="${secs[$to]}" -v c="${cpu[$to]}" -v n="$n" \
        'BEGIN { printf "%-10s %14d %10.1f %10.3f %14.0f %10.2f %16.0f\n", t, b, b / n, s, n / s, c, (c > 0 ? n / c : 0) }'
done
awk -v p="${bytes[perfetto]}" -v c="${bytes[chrome]}" -v ps="${cpu[perfetto]}" -v cs="${cpu[chrome]}" \
    'BEGIN { printf "perfetto / chrome: %.2fx the size, %.2fx the CPU time\n", p / c, (cs > 0 ? ps / cs : 0) }'
printf '{"events":%s,"perfetto_bytes":%s,"chrome_bytes":%s,"perfetto_s":%s,"chrome_s":%s,"perfetto_cpu_s":%s,"chrome_cpu_s":%s}\n' \
    "$n" "${bytes[perfetto]}" "${bytes[chrome]}" "${secs[perfetto]}" "${secs[chrome]}" "${cpu[perfetto]}" \
    "${cpu[chrome]}" >"$results/viewers.json"
