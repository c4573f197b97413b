#!/usr/bin/env bash
# bench/typed/run-typed.sh: how fast ptlog prints typed events (issue 27's
# "typed output at full speed"). Run by `bench/run typed`; see bench/README.md.
#
#   run-typed.sh --build DIR --results DIR --work DIR [--smoke] [--events N]
#                [--runs N] [--before PTLOG]
#
# 1. gen_typed write N small|any (bench/gen_typed.c; default 2M, --smoke 20k)
#    writes two logs of one type, net.rx "u32 len; u16 port; char[8] iface;
#    f64 lat": "small", lat from 0 to 0.000999 (the issue's log), and "any",
#    lat over the whole double range (random finite bit patterns, subnormals,
#    0, -0, DBL_MAX, DBL_TRUE_MIN).
# 2. On each log, four rows: ptlog dump (fields decoded), ptlog convert --to
#    jsonl (with "fields"), ptlog dump --where 'port == 9000' (keeps 1 %),
#    ptlog dump --hex. Each command runs once into a file that gen_typed check
#    reads back (self-check: every event in order with its time, thread and
#    fields; every printed double parses back with strtod to the event's
#    exact bits; --where: exactly the events on port 9000), then --runs times
#    to /dev/null (page cache warm): median wall time and CPU time (bt_once:
#    perf stat task-clock, else /usr/bin/time).
# 3. With --before PTLOG (an older build of ptlog), that binary gets the same
#    self-checks and its runs alternate with this build's, run by run, so the
#    ratio of the two comes from one sitting.
# Exits 1 when a self-check fails. Missed targets are reported, not failures.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../timing.sh
source "$here/../timing.sh"

build="" results="" work="" smoke=0 events="" runs=5 before=""
while (($#)); do
    case $1 in
    --build) build=$2; shift ;;
    --results) results=$2; shift ;;
    --work) work=$2; shift ;;
    --smoke) smoke=1 ;;
    --events) events=$2; shift ;;
    --runs) runs=$2; shift ;;
    --before) before=$2; shift ;;
    *) echo "run-typed.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ -z $build || -z $results || -z $work ]]; then
    echo "usage: run-typed.sh --build DIR --results DIR --work DIR [--smoke] [--events N] [--runs N] [--before PTLOG]" >&2
    exit 2
fi
if ((smoke)); then
    events=${events:-20k}
    runs=1
fi
events=${events:-2M}
gen=$build/bench/gen_typed
builds=(after)
declare -A PTLOG=([after]=$build/tools/ptlog)
if [[ -n $before ]]; then
    [[ -x $before ]] || { echo "run-typed.sh: --before $before: not an executable" >&2; exit 2; }
    builds=(before after)
    PTLOG[before]=$before
fi
mkdir -p "$results" "$work"
out=$work/typed-out
trap 'rm -f "$work/typed-small.ptl" "$work/typed-any.ptl" "$out"' EXIT

fail=0
LOGS=(small any)
ROWS=(dump jsonl where hex)
declare -A LABEL=(
    [dump]="ptlog dump (fields)"
    [jsonl]="ptlog convert --to jsonl"
    [where]="ptlog dump --where 'port == 9000' (1 %)"
    [hex]="ptlog dump --hex"
)
declare -A TARGET=([dump]=15e6 [jsonl]=12e6 [where]=30e6 [hex]=0)
row_cmd() { # row_cmd PTLOG ROW LOG
    case $2 in
    dump) cmd=("$1" dump "$3") ;;
    jsonl) cmd=("$1" convert "$3" --to jsonl) ;;
    where) cmd=("$1" dump --where 'port == 9000' "$3") ;;
    hex) cmd=("$1" dump --hex "$3") ;;
    esac
}

for lg in "${LOGS[@]}"; do
    echo "generating $events events, lat $lg: gen_typed write $events $lg"
    "$gen" write "$events" "$lg" "$work/typed-$lg.ptl"
done
n=$("${PTLOG[after]}" info --quick "$work/typed-small.ptl" | sed -n 's/^events: *//p')

# Self-checks; the run that writes the file is each command's warm-up.
for lg in "${LOGS[@]}"; do
    for row in "${ROWS[@]}"; do
        for b in "${builds[@]}"; do
            row_cmd "${PTLOG[$b]}" "$row" "$work/typed-$lg.ptl"
            if ! "${cmd[@]}" >"$out"; then
                echo "run-typed.sh: SELF-CHECK FAILED: $b: ${cmd[*]} failed" >&2
                fail=1
                continue
            fi
            if ! said=$("$gen" check "$events" "$lg" "$row" "$out"); then
                echo "run-typed.sh: SELF-CHECK FAILED: $b: ${cmd[*]}: the output is not the log's events" >&2
                fail=1
                continue
            fi
            echo "checked $b $row ($lg): $said"
        done
    done
done
rm -f "$out"
((fail)) && exit 1

# Timed runs, the builds alternating run by run.
declare -A walls cpus
for lg in "${LOGS[@]}"; do
    for row in "${ROWS[@]}"; do
        for ((r = 0; r < runs; r++)); do
            for b in "${builds[@]}"; do
                row_cmd "${PTLOG[$b]}" "$row" "$work/typed-$lg.ptl"
                bt_once "${cmd[@]}" || { echo "run-typed.sh: ${cmd[*]} failed" >&2; exit 1; }
                walls[$lg.$row.$b]+="$BT_WALL "
                cpus[$lg.$row.$b]+="${BT_CPU1:-0} "
            done
        done
    done
done

# ---- table and JSON ------------------------------------------------------------
mrate() { awk -v n="$n" -v t="$1" 'BEGIN { printf "%.2f", (t > 0 ? n / t / 1e6 : 0) }'; }
minmax() { printf '%s\n' $1 | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f s", lo, hi }'; }
jlist() { printf '[%s]' "$(printf '%s\n' $1 | paste -sd, -)"; }
read -r load1 _ </proc/loadavg
printf '\nlogs: %s events each (net.rx, 24-byte payloads); %d runs per build, alternating; load %s at the end\n' \
    "$n" "$runs" "$load1"
printf '%-6s %-40s' "lat" "figure"
for b in "${builds[@]}"; do
    printf ' %-34s' "$b: wall M/s [runs]; M/CPU-s"
done
[[ -n $before ]] && printf ' %-7s' "ratio"
printf ' %s\n' "target (lat small)"
rows_json=""
for lg in "${LOGS[@]}"; do
    for row in "${ROWS[@]}"; do
        printf '%-6s %-40s' "$lg" "${LABEL[$row]}"
        declare -A med=()
        row_json=""
        for b in "${builds[@]}"; do
            # shellcheck disable=SC2086
            med[$b]=$(bt_median ${walls[$lg.$row.$b]})
            # shellcheck disable=SC2086
            c=$(bt_median ${cpus[$lg.$row.$b]})
            cr=$(awk -v n="$n" -v c="$c" 'BEGIN { printf (c > 0 ? "%.2f" : "n/a"), (c > 0 ? n / c / 1e6 : 0) }')
            printf ' %-34s' "$(mrate "${med[$b]}") [$(minmax "${walls[$lg.$row.$b]}")]; $cr"
            row_json+="\"$b\": {\"median_s\": ${med[$b]}, \"runs_s\": $(jlist "${walls[$lg.$row.$b]}"), \"cpu_s\": $(jlist "${cpus[$lg.$row.$b]}"), \"events_per_s\": $(awk -v n="$n" -v t="${med[$b]}" 'BEGIN { printf "%.0f", n / t }')}, "
        done
        if [[ -n $before ]]; then
            printf ' %-7s' "$(awk -v a="${med[before]}" -v b="${med[after]}" 'BEGIN { printf "%.2fx", a / b }')"
        fi
        t=${TARGET[$row]}
        verdict="" met=null
        if [[ $t != 0 && $lg == small ]]; then
            ok=$(awk -v n="$n" -v m="${med[after]}" -v t="$t" 'BEGIN { print (n / m >= t) ? 1 : 0 }')
            verdict=">= $(awk -v t="$t" 'BEGIN { print t / 1e6 }') M/s: $([[ $ok == 1 ]] && echo met || echo MISSED)"
            met=$([[ $ok == 1 ]] && echo true || echo false)
        fi
        printf ' %s\n' "$verdict"
        rows_json+="  \"$lg.$row\": {${row_json}\"target_events_per_s\": $t, \"met\": $met},"$'\n'
        unset med
    done
done
if ((smoke)); then
    echo "(smoke sizes: the figures say nothing about the targets)"
fi
cat >"$results/typed.json" <<EOF
{
  "benchmark": "typed",
  "smoke": $([[ $smoke == 1 ]] && echo true || echo false),
  "events": $n,
  "runs": $runs,
  "builds": {$(for b in "${builds[@]}"; do printf '"%s": "%s", ' "$b" "${PTLOG[$b]}"; done)"load_at_end": $load1},
$rows_json  "self_check_failed": false
}
EOF
