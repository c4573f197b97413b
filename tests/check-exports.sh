#!/usr/bin/env bash
# check-exports.sh - the ABI of libtracelog is exactly include/tracelog.exports.
#
# usage: check-exports.sh LIBTRACELOG.so LIBTRACELOG.a EXPORTS_FILE
#        check-exports.sh --update LIBTRACELOG.so EXPORTS_FILE
#
# 1. Every symbol the shared library exports (nm -D --defined-only; types
#    T/D/B/R/W, version suffix stripped) starts with posix_trace_ or tracelog_.
# 2. That sorted list equals EXPORTS_FILE (one symbol per line).
# 3. Every global symbol defined in the static library starts with
#    posix_trace_ or tracelog_ (so that static users get no name clashes).
#
# --update rewrites EXPORTS_FILE from the shared library.
set -euo pipefail

NM=${NM:-nm}
ALLOWED_RE='^(posix_trace_|tracelog_)'
# Symbols the compiler's instrumentation adds (sanitizers, coverage, profiling).
TOOLCHAIN_RE='^(__asan_|___asan_|__odr_asan|__ubsan_|__sanitizer_|__sancov_|__tsan_|__msan_|__llvm_|__gcov_|__profc_|__profd_|__start___sancov|__stop___sancov)'

die() { echo "check-exports: $*" >&2; exit 2; }

# Exported (dynamic, defined) symbols of a shared library, sorted, no versions.
shared_exports() {
    "$NM" -D --defined-only "$1" |
        awk 'NF >= 3 && $(NF - 1) ~ /^[TDBRW]$/ { print $NF }' |
        sed -e 's/@.*$//' |
        grep -Ev "$TOOLCHAIN_RE" |
        LC_ALL=C sort -u
}

if [[ ${1:-} == --update ]]; then
    [[ $# -eq 3 ]] || die "usage: $0 --update LIB.so EXPORTS_FILE"
    [[ -f $2 ]] || die "no such shared library: $2"
    shared_exports "$2" >"$3"
    echo "check-exports: wrote $(wc -l <"$3") symbols to $3"
    exit 0
fi

[[ $# -eq 3 ]] || die "usage: $0 LIB.so LIB.a EXPORTS_FILE"
so=$1 ar=$2 expected=$3
[[ -f $so ]] || die "no such shared library: $so"
[[ -f $ar ]] || die "no such static library: $ar"

status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- 1. prefixes of the shared library's exports -------------------------
shared_exports "$so" >"$tmp/actual"
count=$(wc -l <"$tmp/actual")
echo "check-exports: $so exports $count symbols"
if [[ $count -eq 0 ]]; then
    echo "FAIL: $so exports no symbol at all" >&2
    status=1
fi
if grep -Ev "$ALLOWED_RE" "$tmp/actual" >"$tmp/bad-shared"; then
    echo "FAIL: $so exports symbols outside posix_trace_* / tracelog_*:" >&2
    sed 's/^/    /' "$tmp/bad-shared" >&2
    status=1
fi

# ---- 2. the exported list is the committed one ---------------------------
if [[ ! -f $expected ]]; then
    echo "FAIL: $expected does not exist" >&2
    echo "hint: update include/tracelog.exports if the API change is intended:" >&2
    echo "      bash $0 --update $so $expected" >&2
    status=1
else
    LC_ALL=C sort -u "$expected" | sed '/^[[:space:]]*$/d' >"$tmp/expected"
    if ! diff -u --label "$expected (committed)" --label "$so (built)" \
        "$tmp/expected" "$tmp/actual" >"$tmp/diff"; then
        echo "FAIL: exported symbols differ from $expected" >&2
        echo "      ('-' = in the committed list only, '+' = exported by the build only)" >&2
        cat "$tmp/diff" >&2
        echo "hint: update include/tracelog.exports if the API change is intended:" >&2
        echo "      bash $0 --update $so $expected" >&2
        status=1
    else
        echo "check-exports: exports match $expected"
    fi
fi

# ---- 3. global symbols of the static library -----------------------------
# nm prints "member.o:" headers and "value type name" lines (GNU nm -A glues
# "archive:member:" to the value, llvm-nm -A puts a space after it); undefined
# symbols are left out by --defined-only.
"$NM" --defined-only -g "$ar" 2>/dev/null |
    awk 'NF >= 3 { print $NF }' |
    grep -Ev "$TOOLCHAIN_RE" |
    LC_ALL=C sort -u >"$tmp/static" || true
if [[ ! -s $tmp/static ]]; then
    echo "FAIL: $ar defines no global symbol (nm failed?)" >&2
    status=1
elif grep -Ev "$ALLOWED_RE" "$tmp/static" >"$tmp/bad-static"; then
    echo "FAIL: $ar defines global symbols outside posix_trace_* / tracelog_*" >&2
    echo "      (make them static, or give them the tracelog_ prefix):" >&2
    # Show which object file each one comes from.
    "$NM" --defined-only -g -A "$ar" 2>/dev/null >"$tmp/static-A" || true
    awk 'NR == FNR { bad[$1] = 1; next }
         NF >= 3 && ($NF in bad) { where = $1; sub(/:[^:]*$/, "", where);
                                   printf "    %-40s %s\n", $NF, where }' \
        "$tmp/bad-static" "$tmp/static-A" | LC_ALL=C sort -u >&2
    status=1
else
    echo "check-exports: $(wc -l <"$tmp/static") global symbols in $ar, all prefixed"
fi

if [[ $status -eq 0 ]]; then
    echo "check-exports: OK"
fi
exit $status
