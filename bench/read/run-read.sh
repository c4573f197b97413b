#!/usr/bin/env bash
# bench/read/run-read.sh: how fast tracelog reads and imports (issue 4's and
# issue 11's targets). Run by `bench/run read`; see bench/README.md.
#
#   run-read.sh --build DIR --results DIR --work DIR [--smoke]
#               [--events N] [--runs N] [--info-events N] [--no-rss]
#
# 1. bench_event --generate writes N events (16-byte payloads, default 10M;
#    --smoke: 100k) through posix_trace_event into a FLUSH log.
# 2. Timed (hyperfine if installed, else a loop; median and min-max of
#    --runs runs after a warm-up, page cache warm; output thrown away):
#    ptlog dump, ptlog convert --to jsonl, samples/offline_analyzer (a C
#    analyzer through posix_trace_getnext_event), ptlog info (one decoding
#    pass), and the imports ptlog convert F --to ptl of that log's JSON
#    Lines and JSON (written once beforehand) -> events/s, and events per
#    CPU-second (user+system: what other processes on our CPU do not
#    inflate).
# 3. Peak RSS (/usr/bin/time -v) of every ptlog command that reads events
#    (dump, convert to each format, filter, merge, info, info --threads,
#    verify, both imports), on that log and on a log a tenth its size: the
#    same figure on both says memory does not grow with the log.
# 4. ptlog info --quick (answers from the block index) on a cleanly closed
#    log of about 1 GB (--info-events events, default 120M; --smoke: the
#    log of step 1).
# Self-checks (exit 1): ptlog verify passes; dump and convert print exactly
# one line per event; the analyzer counts every event; each import dumps
# exactly as the log it came from. Missed targets are reported, not failures.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../timing.sh
source "$here/../timing.sh"

build="" results="" work="" smoke=0 events="" runs=5 info_events="" do_rss=1
while (($#)); do
    case $1 in
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --smoke) smoke=1 ;;
    --events) events=$2; shift ;;
    --runs) runs=$2; shift ;;
    --info-events) info_events=$2; shift ;;
    --no-rss) do_rss=0 ;;
    *) echo "run-read.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-read.sh --build DIR --results DIR --work DIR [--smoke] [--events N] [--runs N] [--info-events N] [--no-rss]" >&2
    exit 2
fi
if ((smoke)); then
    events=${events:-100k}
    runs=3
else
    events=${events:-10M}
    info_events=${info_events:-120M}
fi
ptlog=$build/tools/ptlog
gen=$build/bench/bench_event
analyzer=$build/samples/offline_analyzer
mkdir -p "$results" "$work"
log=$work/read.ptl
small=$work/read-tenth.ptl
big=$work/read-1g.ptl
jl=$work/read.jsonl
js=$work/read.json
imp=$work/read-import.ptl
scratch=$work/read-out
trap 'rm -f "$log" "$small" "$big" "$jl" "$js" "$jl.small" "$js.small" "$imp" "$scratch"' EXIT

fail=0
check() { # check CONDITION-STATUS MESSAGE
    if [[ $1 != 0 ]]; then
        echo "run-read.sh: SELF-CHECK FAILED: $2" >&2
        fail=1
    fi
}
count_of() { awk -v s="$1" 'BEGIN { m = 1; if (s ~ /[kK]$/) m = 1e3; if (s ~ /[mM]$/) m = 1e6; if (s ~ /[gG]$/) m = 1e9; sub(/[kKmMgG]$/, "", s); printf "%d", s * m }'; }

echo "generating $events events (16-byte payloads) with bench_event --generate"
"$gen" --generate "$events" --out "$log" --payload 16
n=$("$ptlog" dump --no-system "$log" | wc -l)
size=$(stat -c %s "$log")
status=0
"$ptlog" verify "$log" >/dev/null || status=$?
check "$status" "ptlog verify $log exited $status"
want=$(count_of "$events")
[[ $n == "$want" ]] || check 1 "ptlog dump --no-system printed $n lines for $want events"
total=$("$ptlog" dump "$log" | wc -l) # every event, system events included: what the timed commands read
lines=$("$ptlog" convert "$log" --to jsonl | wc -l)
[[ $lines -ge $total ]] || check 1 "convert --to jsonl printed $lines lines for $total events"
counted=$("$analyzer" "$log" | awk 'END { print $1 }')
[[ $counted == "$total" ]] || check 1 "offline_analyzer counted $counted events for $total"

echo "writing the log's JSON Lines and JSON for the imports"
"$ptlog" convert "$log" --to jsonl -o "$jl"
"$ptlog" convert "$log" --to json -o "$js"
sum_of() { "$ptlog" dump "$1" | md5sum | cut -d' ' -f1; }
want_sum=$(sum_of "$log")
for f in "$jl" "$js"; do
    "$ptlog" convert "$f" --to ptl -o "$imp"
    [[ $(sum_of "$imp") == "$want_sum" ]] || check 1 "the import of $f does not dump as $log"
done

# The timed rows; a target of 0 is relative to babeltrace2 (bench/README.md, lttng).
ROWS=(dump jsonl analyzer info import_jsonl import_json)
declare -A LABEL=(
    [dump]="ptlog dump > /dev/null"
    [jsonl]="ptlog convert --to jsonl > /dev/null"
    [analyzer]="offline_analyzer (posix_trace_getnext_event)"
    [info]="ptlog info (one decoding pass)"
    [import_jsonl]="ptlog convert F.jsonl --to ptl (import)"
    [import_json]="ptlog convert F.json --to ptl (import)"
)
declare -A TARGET=([dump]=15e6 [jsonl]=10e6 [analyzer]=20e6 [info]=0 [import_jsonl]=3e6 [import_json]=2e6)
row_cmd() {
    case $1 in
    dump) cmd=("$ptlog" dump "$log") ;;
    jsonl) cmd=("$ptlog" convert "$log" --to jsonl) ;;
    analyzer) cmd=("$analyzer" "$log") ;;
    info) cmd=("$ptlog" info "$log") ;;
    import_jsonl) cmd=("$ptlog" convert "$jl" --to ptl -o "$imp") ;;
    import_json) cmd=("$ptlog" convert "$js" --to ptl -o "$imp") ;;
    esac
}

declare -A med lo hi rruns cpu
for what in "${ROWS[@]}"; do
    row_cmd "$what"
    bt_time "$what" "$runs" "${cmd[@]}" || check 1 "${cmd[*]} failed"
    med[$what]=$BT_MEDIAN lo[$what]=$BT_MIN hi[$what]=$BT_MAX rruns[$what]=$BT_RUNS cpu[$what]=${BT_CPU:-0}
done

# ---- memory: every command that reads events, on the log and on a tenth of it ----
RSS_CMDS=(dump jsonl json chrome ptl filter merge info info_threads verify import_jsonl import_json)
rss_cmd() { # rss_cmd NAME LOG JSONL JSON
    case $1 in
    dump) cmd=("$ptlog" dump "$2") ;;
    jsonl) cmd=("$ptlog" convert "$2" --to jsonl) ;;
    json) cmd=("$ptlog" convert "$2" --to json) ;;
    chrome) cmd=("$ptlog" convert "$2" --to chrome -o "$scratch") ;;
    ptl) cmd=("$ptlog" convert "$2" --to ptl -o "$scratch") ;;
    filter) cmd=("$ptlog" filter "$2" --event bench_event -o "$scratch") ;;
    merge) cmd=("$ptlog" merge "$2" "$2" -o "$scratch") ;;
    info) cmd=("$ptlog" info "$2") ;;
    info_threads) cmd=("$ptlog" info --threads "$2") ;;
    verify) cmd=("$ptlog" verify "$2") ;;
    import_jsonl) cmd=("$ptlog" convert "$3" --to ptl -o "$scratch") ;;
    import_json) cmd=("$ptlog" convert "$4" --to ptl -o "$scratch") ;;
    esac
}
declare -A rss rss_small
rss_max=0 rss_small_max=0
if ((do_rss)); then
    tenth=$(((want + 9) / 10))
    "$gen" --generate "$tenth" --out "$small" --payload 16 >/dev/null
    "$ptlog" convert "$small" --to jsonl -o "$jl.small"
    "$ptlog" convert "$small" --to json -o "$js.small"
    for what in "${RSS_CMDS[@]}"; do
        rss_cmd "$what" "$log" "$jl" "$js"
        rss[$what]=$(bt_maxrss_kib "${cmd[@]}") || check 1 "${cmd[*]} failed under /usr/bin/time"
        rss_cmd "$what" "$small" "$jl.small" "$js.small"
        rss_small[$what]=$(bt_maxrss_kib "${cmd[@]}") || check 1 "${cmd[*]} failed under /usr/bin/time"
        ((rss[$what] > rss_max)) && rss_max=${rss[$what]}
        ((rss_small[$what] > rss_small_max)) && rss_small_max=${rss_small[$what]}
    done
    rm -f "$jl.small" "$js.small"
fi

if ((smoke)) || [[ -z $info_events ]]; then
    info_log=$log
else
    echo "generating $info_events events for the info --quick log (about 1 GB)"
    "$gen" --generate "$info_events" --out "$big" --payload 16
    info_log=$big
fi
info_size=$(stat -c %s "$info_log")
status=0
"$ptlog" info --quick "$info_log" >/dev/null || status=$?
check "$status" "ptlog info --quick exited $status"
bt_time "ptlog-info-quick" "$runs" "$ptlog" info --quick "$info_log" || check 1 "ptlog info --quick failed"
info_med=$BT_MEDIAN info_lo=$BT_MIN info_hi=$BT_MAX info_runs=$BT_RUNS

# ---- table and JSON ------------------------------------------------------------
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }'; }
ms() { awk -v t="$1" 'BEGIN { printf "%.2f", t * 1e3 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
json_runs() { local r; r=$(printf '%s\n' $1 | paste -sd, -); printf '[%s]' "$r"; }
met() { awk -v v="$1" -v b="$2" -v most="$3" 'BEGIN { ok = most ? v <= b : v >= b; print ok ? "met" : "MISSED" }'; }
cpurate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.2f M/CPU-s", n / t / 1e6; else printf "n/a" }'; }
printf '\nlog: %s events (%s with system events), %s bytes (%.2f B/event)\n' "$n" "$total" "$size" \
    "$(awk -v s="$size" -v n="$total" 'BEGIN { print s / n }')"
printf '%-48s %14s  %-24s %-20s %s\n' "figure" "median" "min-max (time)" "target" ""
rows_json=""
for what in "${ROWS[@]}"; do
    r=$(rate "$total" "${med[$what]}")
    t=${TARGET[$what]}
    if [[ $t == 0 ]]; then
        verdict="" target_text="(vs babeltrace2)" met_json=null
    else
        verdict=$(met "$r" "$t" 0)
        target_text=">= $(awk -v t="$t" 'BEGIN { print t / 1e6 }') M events/s"
        met_json=$([[ $verdict == met ]] && echo true || echo false)
    fi
    printf '%-48s %9.2f M/s  %-24s %-20s %s  (%s)\n' "${LABEL[$what]}" "$(awk -v r="$r" 'BEGIN { print r / 1e6 }')" \
        "$(ms "${lo[$what]}")-$(ms "${hi[$what]}") ms" "$target_text" "$verdict" "$(cpurate "$total" "${cpu[$what]}")"
    rows_json+="  \"$what\": {\"median_s\": ${med[$what]}, \"min_s\": ${lo[$what]}, \"max_s\": ${hi[$what]}, \"runs_s\": $(json_runs "${rruns[$what]}"), \"events_per_s\": $r, \"cpu_s\": ${cpu[$what]}, \"target_events_per_s\": $t, \"met\": $met_json},"$'\n'
done
rss_json=""
if ((do_rss)); then
    for what in "${RSS_CMDS[@]}"; do
        printf '%-48s %10s MiB  %-24s %-20s %s\n' "peak RSS: $what" "$(mib "${rss[$what]}")" \
            "($(mib "${rss_small[$what]}") MiB at a tenth)" "< 64 MiB" "$(met "${rss[$what]}" 65535 1)"
        rss_json+="\"$what\": [${rss[$what]}, ${rss_small[$what]}], "
    done
fi
printf '%-48s %10.2f ms  %-24s %-20s %s\n' "ptlog info --quick, $(awk -v s="$info_size" 'BEGIN { printf "%.2f GB", s / 1e9 }') log" \
    "$(awk -v t="$info_med" 'BEGIN { print t * 1e3 }')" "$(ms "$info_lo")-$(ms "$info_hi") ms" "< 50 ms (1 GB)" "$(met "$info_med" 0.05 1)"
if ((smoke)); then
    echo "(smoke sizes: the figures say nothing about the targets)"
fi

cat >"$results/read.json" <<EOF
{
  "benchmark": "read",
  "smoke": $([[ $smoke == 1 ]] && echo true || echo false),
  "timer": "$(command -v hyperfine >/dev/null && echo hyperfine || echo loop)",
  "runs": $runs,
  "log": {"events": $n, "events_with_system": $total, "bytes": $size},
$rows_json  "max_rss_kib": {${rss_json}"max": $rss_max, "max_at_a_tenth": $rss_small_max},
  "rss_met": $([[ $(met "$rss_max" 65535 1) == met ]] && echo true || echo false),
  "info_quick": {"log_bytes": $info_size, "median_s": $info_med, "min_s": $info_lo, "max_s": $info_hi, "runs_s": $(json_runs "$info_runs"), "target_s": 0.05, "met": $([[ $(met "$info_med" 0.05 1) == met ]] && echo true || echo false)},
  "self_check_failed": $([[ $fail == 1 ]] && echo true || echo false)
}
EOF
exit "$fail"
