# shellcheck shell=bash disable=SC2034  # sourced; the BT_* results are read by the caller
# bench/timing.sh: timing helpers for the benchmark scripts (sourced, not run).
#
#   bt_time NAME RUNS CMD...   times CMD (its standard output thrown away) RUNS
#                              times after one untimed warm-up run, with
#                              hyperfine when it is installed, else with a
#                              loop; sets BT_MEDIAN, BT_MIN, BT_MAX (seconds)
#                              and BT_RUNS (the run times, space-separated),
#                              BT_CPU (mean user+system CPU seconds of a run,
#                              hyperfine only, else empty: wall time counts
#                              other processes' time on our CPU, CPU time
#                              does not), and returns non-zero if CMD failed.
#   bt_once CMD...             runs CMD once (its standard output thrown away);
#                              sets BT_WALL (seconds) and BT_CPU1 (its CPU
#                              seconds: perf stat's task-clock when perf runs
#                              here, else user+system from /usr/bin/time, 10 ms
#                              resolution; empty without either); returns
#                              non-zero if CMD failed. For scripts that
#                              alternate commands run by run (before and after
#                              builds in one sitting).
#   bt_median NUMBERS...       prints the median of the numbers
#   bt_maxrss_kib CMD...       runs CMD once (output thrown away) under
#                              /usr/bin/time -v and prints its peak RSS in KiB

bt_median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print 0; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.9f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bt_time() {
    local name=$1 runs=$2
    shift 2
    BT_MEDIAN=0 BT_MIN=0 BT_MAX=0 BT_RUNS="" BT_CPU=""
    if command -v hyperfine >/dev/null 2>&1 && [[ -z ${BT_NO_HYPERFINE:-} ]]; then
        local csv json
        csv=$(mktemp) json=$(mktemp)
        local cmd
        cmd=$(printf '%q ' "$@")
        if ! hyperfine --style none --warmup 1 --runs "$runs" --output null -n "$name" \
            --export-csv "$csv" --export-json "$json" "$cmd" >/dev/null 2>"$csv.err"; then
            cat "$csv.err" >&2
            rm -f "$csv" "$csv.err" "$json"
            return 1
        fi
        # command,mean,stddev,median,user,system,min,max
        local user sys
        IFS=, read -r _ _ _ BT_MEDIAN user sys BT_MIN BT_MAX < <(sed -n 2p "$csv")
        BT_CPU=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.6f", u + s }')
        BT_RUNS=$(tr -d '\n ' <"$json" | sed -n 's/.*"times":\[\([^]]*\)\].*/\1/p' | tr ',' ' ')
        rm -f "$csv" "$csv.err" "$json"
        return 0
    fi
    "$@" >/dev/null || return 1
    local i t0 t1 times=()
    for ((i = 0; i < runs; i++)); do
        t0=$(date +%s%N)
        "$@" >/dev/null || return 1
        t1=$(date +%s%N)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.9f", (b - a) / 1e9 }')")
    done
    BT_RUNS="${times[*]}"
    BT_MEDIAN=$(bt_median "${times[@]}")
    BT_MIN=$(printf '%s\n' "${times[@]}" | sort -g | head -n1)
    BT_MAX=$(printf '%s\n' "${times[@]}" | sort -g | tail -n1)
}

bt_once() {
    local t0 t1 cpu status=0
    BT_WALL=0 BT_CPU1=""
    cpu=$(mktemp)
    t0=$(date +%s%N)
    if [[ -z ${BT_PERF_OK+set} ]]; then # task-clock needs no PMU; perf may still be refused (paranoid level)
        BT_PERF_OK=0
        perf stat -x, -e task-clock -o "$cpu" -- true >/dev/null 2>&1 && grep -q task-clock "$cpu" && BT_PERF_OK=1
    fi
    if ((BT_PERF_OK)); then
        perf stat -x, -e task-clock -o "$cpu" -- "$@" >/dev/null || status=$?
    elif [[ -x /usr/bin/time ]]; then
        /usr/bin/time -f '%U %S' -o "$cpu" "$@" >/dev/null || status=$?
    else
        "$@" >/dev/null || status=$?
    fi
    t1=$(date +%s%N)
    BT_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.9f", (b - a) / 1e9 }')
    if ((BT_PERF_OK)); then
        BT_CPU1=$(awk -F, '$3 == "task-clock" { printf "%.4f", $1 / 1000 }' "$cpu")
    elif [[ -s $cpu ]]; then
        BT_CPU1=$(awk 'END { printf "%.2f", $1 + $2 }' "$cpu")
    fi
    rm -f "$cpu"
    return "$status"
}

bt_maxrss_kib() {
    local out
    out=$(mktemp)
    if ! /usr/bin/time -v -o "$out" "$@" >/dev/null; then
        rm -f "$out"
        return 1
    fi
    awk -F': *' '/Maximum resident set size/ { print $2 }' "$out"
    rm -f "$out"
}
