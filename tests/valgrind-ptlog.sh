#!/usr/bin/env bash
# valgrind (memcheck) on ptlog's golden inputs: every command of the tool on
# the committed golden logs (samples/golden/*.ptl of format 1.0 and
# samples/golden/1.1/*.ptl) and the tests/ptlog JSON inputs,
# conversions to json, jsonl (also with --ts=relative), chrome, perfetto and
# ptl, and back. Not a ctest (slow):
# .ci/run calls it with the ptlog of its gcc build.
#
#   bash tests/valgrind-ptlog.sh PTLOG [JOBS]
#
# A run passes when memcheck reports no error and no leak ("ERROR SUMMARY:
# 0 errors") and ptlog exits 0, or 1 on the inputs that are damaged on
# purpose (cut_short, damaged: "recovered with loss"). valgrind runs with
# --error-exitcode=1 --leak-check=full; since ptlog's own exit status 1 means
# "recovered with loss", each run's verdict is read from its memcheck log.
set -u
ptlog=${1:?usage: valgrind-ptlog.sh PTLOG [JOBS]}
jobs=${2:-2}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
golden="$src/samples/golden"
inputs="$src/tests/ptlog"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v valgrind >/dev/null || { echo "valgrind not found"; exit 2; }

# One line per run: "NAME<TAB>ALLOWED_EXITS<TAB>ptlog arguments...". Runs of
# one line are independent, except that a line may read a file an earlier
# stage wrote (stages are run in order, the lines of a stage in parallel).
stage1=() stage2=()
add1() { stage1+=("$(printf '%s\t' "$@")"); }
add2() { stage2+=("$(printf '%s\t' "$@")"); }

for f in "$golden"/*.ptl "$golden"/1.1/*.ptl; do # format 1.0 and 1.1 logs
    n=$(basename "$f" .ptl)
    [ "$(dirname "$f")" = "$golden" ] || n="1.1-$n"
    ok=0
    case $n in *cut_short | *damaged) ok=01 ;; esac
    add1 "$n-dump" "$ok" dump "$f" -o "$work/$n.dump"
    add1 "$n-dump-relative" "$ok" dump --relative --event 'file:*' --limit 50 "$f" -o /dev/null
    add1 "$n-info" "$ok" info "$f" -o /dev/null
    add1 "$n-info-json" "$ok" info --json "$f" -o /dev/null
    add1 "$n-verify" "$ok" verify "$f"
    add1 "$n-to-json" "$ok" convert "$f" --to json -o "$work/$n.json"
    add1 "$n-to-jsonl" "$ok" convert "$f" --to jsonl -o "$work/$n.jsonl"
    add1 "$n-to-chrome" "$ok" convert "$f" --to chrome -o "$work/$n.chrome"
    add1 "$n-to-perfetto" "$ok" convert "$f" --to perfetto -o "$work/$n.pftrace"
    add1 "$n-to-ptl" "$ok" convert "$f" --to ptl -o "$work/$n.copy.ptl"
    add1 "$n-filter" "$ok" filter --no-system --begin +1ms "$f" -o "$work/$n.filtered.ptl"
    add2 "$n-json-to-ptl" 0 convert "$work/$n.json" --to ptl -o "$work/$n.from-json.ptl"
    add2 "$n-jsonl-to-ptl" 0 convert "$work/$n.jsonl" --to ptl -o "$work/$n.from-jsonl.ptl"
    add2 "$n-json-dump" 0 dump "$work/$n.json" -o /dev/null
    add2 "$n-copy-verify" 0 verify "$work/$n.copy.ptl"
done
add1 merge 01 merge "$golden/append.ptl" "$golden/loop.ptl" "$golden/damaged.ptl" -o "$work/merged.ptl"
for f in "$inputs"/small.in.jsonl "$inputs"/small.json "$inputs"/small.jsonl; do
    n=$(basename "$f")
    add1 "$n-dump" 0 dump "$f" -o /dev/null
    add1 "$n-to-ptl" 0 convert "$f" --to ptl -o "$work/$n.ptl"
    add1 "$n-to-json" 0 convert "$f" --to json -o /dev/null
    add1 "$n-to-chrome" 0 convert "$f" --to chrome -o /dev/null
    add1 "$n-to-perfetto" 0 convert "$f" --to perfetto -o /dev/null
    add1 "$n-to-jsonl-relative" 0 convert "$f" --to jsonl --ts=relative -o "$work/$n.rel.jsonl"
    add2 "$n-ptl-info" 0 info "$work/$n.ptl" -o /dev/null
    add2 "$n-relative-to-ptl" 0 convert "$work/$n.rel.jsonl" --to ptl -o /dev/null
done
# Errors are paths too: a missing file, invalid JSON, a JSON value of the wrong type.
printf '{"events":[{"ts":1,"id":1},{"ts":"x"}]}\n' > "$work/bad.json"
add1 missing-file 3 dump "$work/no-such-file.ptl"
add1 bad-json 3 convert "$work/bad.json" --to ptl -o "$work/bad.ptl"

run_one() { # line
    local name ok
    IFS=$'\t' read -r -a f <<< "$1"
    name=${f[0]} ok=${f[1]}
    local log="$work/vg-$name.log"
    valgrind --tool=memcheck --error-exitcode=1 --leak-check=full --log-file="$log" \
        "$ptlog" "${f[@]:2}" > /dev/null 2> "$work/err-$name.txt"
    local rc=$?
    if ! grep -q "ERROR SUMMARY: 0 errors" "$log"; then
        echo "FAILED: $name: memcheck reports errors (ptlog ${f[*]:2})"
        sed 's/^/    /' "$log"
        return 1
    fi
    if [[ $ok != *$rc* ]]; then
        echo "FAILED: $name: ptlog exited $rc, expected one of: $ok (ptlog ${f[*]:2})"
        sed 's/^/    /' "$work/err-$name.txt"
        return 1
    fi
    echo "ok: $name"
}
export -f run_one
export ptlog work

failed=0 total=0
for stage in stage1 stage2; do
    declare -n lines=$stage
    total=$((total + ${#lines[@]}))
    if ! printf '%s\0' "${lines[@]}" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} > "$work/$stage.out"; then
        failed=1
    fi
    grep -v '^ok: ' "$work/$stage.out"
done
bad=$(cat "$work"/stage*.out | grep -c '^FAILED')
echo "valgrind ptlog: $((total - bad)) of $total runs clean"
[[ $failed -eq 0 && $bad -eq 0 ]]
