#!/usr/bin/env bash
# bench/read/run-read.sh: how fast ptlog reads (issue 4's targets). Run by
# `bench/run read`; see bench/README.md.
#
#   run-read.sh --build DIR --results DIR --work DIR [--smoke]
#               [--events N] [--runs N] [--info-events N]
#
# 1. bench_event --generate writes N events (16-byte payloads, default 10M;
#    --smoke: 100k) through posix_trace_event into a FLUSH log.
# 2. ptlog dump and ptlog convert --to jsonl of that log, output thrown
#    away, timed (hyperfine if installed, else a loop): median and min-max
#    of --runs runs after a warm-up (page cache warm) -> events/s.
# 3. Peak RSS of ptlog convert --to jsonl (/usr/bin/time -v).
# 4. ptlog info --quick (answers from the block index) on a cleanly closed
#    log of about 1 GB (--info-events events, default 120M; --smoke: the
#    log of step 1).
# Self-checks (exit 1): ptlog verify passes; dump and convert print exactly
# one line per event. Missed targets are reported, not failures.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../timing.sh
source "$here/../timing.sh"

build="" results="" work="" smoke=0 events="" runs=5 info_events=""
while (($#)); do
    case $1 in
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --smoke) smoke=1 ;;
    --events) events=$2; shift ;;
    --runs) runs=$2; shift ;;
    --info-events) info_events=$2; shift ;;
    *) echo "run-read.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-read.sh --build DIR --results DIR --work DIR [--smoke] [--events N] [--runs N] [--info-events N]" >&2
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
mkdir -p "$results" "$work"
log=$work/read.ptl
big=$work/read-1g.ptl
trap 'rm -f "$log" "$big"' EXIT

fail=0
check() { # check CONDITION-STATUS MESSAGE
    if [[ $1 != 0 ]]; then
        echo "run-read.sh: SELF-CHECK FAILED: $2" >&2
        fail=1
    fi
}

echo "generating $events events (16-byte payloads) with bench_event --generate"
"$gen" --generate "$events" --out "$log" --payload 16
n=$("$ptlog" dump --no-system "$log" | wc -l)
size=$(stat -c %s "$log")
status=0
"$ptlog" verify "$log" >/dev/null || status=$?
check "$status" "ptlog verify $log exited $status"
want=$(awk -v s="$events" 'BEGIN { m = 1; if (s ~ /[kK]$/) m = 1e3; if (s ~ /[mM]$/) m = 1e6; if (s ~ /[gG]$/) m = 1e9; sub(/[kKmMgG]$/, "", s); printf "%d", s * m }')
[[ $n == "$want" ]] || check 1 "ptlog dump --no-system printed $n lines for $want events"
total=$("$ptlog" dump "$log" | wc -l) # every event, system events included: what the timed commands print
jl=$("$ptlog" convert "$log" --to jsonl | wc -l)
[[ $jl -ge $total ]] || check 1 "convert --to jsonl printed $jl lines for $total events"

rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }'; }
ms() { awk -v t="$1" 'BEGIN { printf "%.2f", t * 1e3 }'; }
json_runs() { local r; r=$(printf '%s\n' $1 | paste -sd, -); printf '[%s]' "$r"; }

declare -A med lo hi rruns cpu
for what in dump jsonl; do
    if [[ $what == dump ]]; then
        cmd=("$ptlog" dump "$log")
    else
        cmd=("$ptlog" convert "$log" --to jsonl)
    fi
    bt_time "ptlog-$what" "$runs" "${cmd[@]}" || check 1 "${cmd[*]} failed"
    med[$what]=$BT_MEDIAN lo[$what]=$BT_MIN hi[$what]=$BT_MAX rruns[$what]=$BT_RUNS cpu[$what]=${BT_CPU:-0}
done
rss=$(bt_maxrss_kib "$ptlog" convert "$log" --to jsonl) || check 1 "ptlog convert under /usr/bin/time failed"

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
dump_rate=$(rate "$total" "${med[dump]}")
jsonl_rate=$(rate "$total" "${med[jsonl]}")
met() { awk -v v="$1" -v b="$2" -v most="$3" 'BEGIN { ok = most ? v <= b : v >= b; print ok ? "met" : "MISSED" }'; }
printf '\nlog: %s events (%s with system events), %s bytes (%.2f B/event)\n' "$n" "$total" "$size" \
    "$(awk -v s="$size" -v n="$total" 'BEGIN { print s / n }')"
printf '%-44s %14s  %-24s %-22s %s\n' "figure" "median" "min-max (time)" "target" ""
cpurate() { awk -v n="$1" -v t="$2" 'BEGIN { if (t > 0) printf "%.2f M/CPU-s", n / t / 1e6; else printf "n/a" }'; }
printf '%-44s %9.2f M/s  %-24s %-22s %s  (%s)\n' "ptlog dump > /dev/null" "$(awk -v r="$dump_rate" 'BEGIN { print r / 1e6 }')" \
    "$(ms "${lo[dump]}")-$(ms "${hi[dump]}") ms" ">= 8 M events/s" "$(met "$dump_rate" 8e6 0)" "$(cpurate "$total" "${cpu[dump]}")"
printf '%-44s %9.2f M/s  %-24s %-22s %s  (%s)\n' "ptlog convert --to jsonl > /dev/null" "$(awk -v r="$jsonl_rate" 'BEGIN { print r / 1e6 }')" \
    "$(ms "${lo[jsonl]}")-$(ms "${hi[jsonl]}") ms" ">= 6 M events/s" "$(met "$jsonl_rate" 6e6 0)" "$(cpurate "$total" "${cpu[jsonl]}")"
printf '%-44s %9.1f MiB  %-24s %-22s %s\n' "peak RSS of convert --to jsonl" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
    "(one run)" "< 64 MiB" "$(met "$rss" 65535 1)"
printf '%-44s %10.2f ms  %-24s %-22s %s\n' "ptlog info --quick, $(awk -v s="$info_size" 'BEGIN { printf "%.2f GB", s / 1e9 }') log" \
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
  "dump": {"median_s": ${med[dump]}, "min_s": ${lo[dump]}, "max_s": ${hi[dump]}, "runs_s": $(json_runs "${rruns[dump]}"), "events_per_s": $dump_rate, "cpu_s": ${cpu[dump]}, "target_events_per_s": 8000000, "met": $([[ $(met "$dump_rate" 8e6 0) == met ]] && echo true || echo false)},
  "jsonl": {"median_s": ${med[jsonl]}, "min_s": ${lo[jsonl]}, "max_s": ${hi[jsonl]}, "runs_s": $(json_runs "${rruns[jsonl]}"), "events_per_s": $jsonl_rate, "cpu_s": ${cpu[jsonl]}, "target_events_per_s": 6000000, "met": $([[ $(met "$jsonl_rate" 6e6 0) == met ]] && echo true || echo false)},
  "convert_max_rss_kib": $rss,
  "convert_rss_met": $([[ $(met "$rss" 65535 1) == met ]] && echo true || echo false),
  "info_quick": {"log_bytes": $info_size, "median_s": $info_med, "min_s": $info_lo, "max_s": $info_hi, "runs_s": $(json_runs "$info_runs"), "target_s": 0.05, "met": $([[ $(met "$info_med" 0.05 1) == met ]] && echo true || echo false)},
  "self_check_failed": $([[ $fail == 1 ]] && echo true || echo false)
}
EOF
exit "$fail"
