#!/usr/bin/env bash
# check-install.sh - install the build tree into a temporary prefix and use it
# the way a downstream project would.
#
#   (a) tests/consumer/ built with find_package(tracelog) (shared and static)
#   (b) tests/consumer/main.c built with pkg-config (shared, then static)
#   (c) the prefix holds bin/ptlog, libtracelog.a, libtracelog.so, the headers
#   (d) tracelog.pc requires exactly the libraries libtracelog.so needs
#   (e) README's static links: libtracelog.a in the program with the system's
#       shared libraries beside it (-Wl,-Bstatic), and fully static (-static)
#       where every dependency has a static library (Debian ships no libcbor.a)
#
# Environment (set by ctest):
#   TL_BUILD_DIR        build tree to install (required)
#   TL_SOURCE_DIR       source tree (default: this script's parent directory)
#   TL_CONSUMER_CC      C compiler for the consumer (default: cc)
#   TL_CONSUMER_CFLAGS  extra flags for compiling and linking it (e.g. sanitizers)
#   TL_CMAKE_COMMAND    cmake to use (default: cmake)
#   TL_EXPECT_PTLOG     1 if bin/ptlog must be installed (default: 1)
#   TL_KEEP_TMP         1 to keep the temporary directory
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${TL_BUILD_DIR:?TL_BUILD_DIR must name the build directory}"
TL_SOURCE_DIR=${TL_SOURCE_DIR:-$(dirname "$here")}
CC=${TL_CONSUMER_CC:-cc}
CFLAGS=${TL_CONSUMER_CFLAGS:-}
CMAKE=${TL_CMAKE_COMMAND:-cmake}
EXPECT_PTLOG=${TL_EXPECT_PTLOG:-1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tl-install.XXXXXX")
if [[ ${TL_KEEP_TMP:-0} == 1 ]]; then
    echo "check-install: keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
prefix=$tmp/prefix
consumer_src=$TL_SOURCE_DIR/tests/consumer

step() { printf '\n=== check-install: %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "install $TL_BUILD_DIR into $prefix"
"$CMAKE" --install "$TL_BUILD_DIR" --prefix "$prefix"

# The library directory is lib/ or lib/<multiarch>/ depending on the configuration.
pcfile=$(find "$prefix" -name tracelog.pc -path '*/pkgconfig/*' | head -n 1)
[[ -n $pcfile ]] || fail "no pkgconfig/tracelog.pc installed under $prefix"
libdir=$(dirname "$(dirname "$pcfile")")
echo "libdir: $libdir"

# ---- (c) installed files -------------------------------------------------
step "(c) installed files"
expect_file() {
    [[ -e $1 ]] || fail "missing from the install: ${1#"$prefix"/}"
    echo "ok  ${1#"$prefix"/}"
}
expect_file "$prefix/include/tracelog.h"
for h in "$TL_SOURCE_DIR"/include/*.h; do
    [[ -e $h ]] && expect_file "$prefix/include/$(basename "$h")"
done
for h in "$TL_SOURCE_DIR"/include/tracelog/*.h; do
    [[ -e $h ]] && expect_file "$prefix/include/tracelog/$(basename "$h")"
done
expect_file "$libdir/libtracelog.a"
expect_file "$libdir/libtracelog.so"
expect_file "$(readlink -f "$libdir/libtracelog.so")"
expect_file "$libdir/libtracelog.so.0"
expect_file "$libdir/cmake/tracelog/tracelogConfig.cmake"
expect_file "$libdir/cmake/tracelog/tracelogConfigVersion.cmake"
expect_file "$libdir/cmake/tracelog/tracelogTargets.cmake"
expect_file "$pcfile"
if [[ $EXPECT_PTLOG == 1 ]]; then
    expect_file "$prefix/bin/ptlog"
    [[ -x $prefix/bin/ptlog ]] || fail "bin/ptlog is not executable"
    if [[ -e $TL_SOURCE_DIR/tools/ptlog/ptlog.1 ]]; then
        man=$(find "$prefix" -path '*/man1/ptlog.1' | head -n 1)
        expect_file "${man:-$prefix/share/man/man1/ptlog.1}"
    fi
    if [[ -e $TL_SOURCE_DIR/tools/ptlog/ptlog.bash-completion ]]; then
        expect_file "$prefix/share/bash-completion/completions/ptlog"
    fi
fi
grep -q "^prefix=$prefix\$" "$pcfile" ||
    fail "tracelog.pc does not point at the install prefix: $(grep '^prefix=' "$pcfile")"

# ---- (a) CMake consumer --------------------------------------------------
step "(a) CMake consumer (find_package)"
"$CMAKE" -S "$consumer_src" -B "$tmp/consumer-build" \
    -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_C_FLAGS="$CFLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="$CFLAGS"
found_dir=$(sed -n 's/^tracelog_DIR:PATH=//p' "$tmp/consumer-build/CMakeCache.txt")
[[ $found_dir == "$prefix"/* ]] ||
    fail "find_package(tracelog) found $found_dir, not the package in $prefix"
"$CMAKE" --build "$tmp/consumer-build"
echo "--- consumer (tracelog::tracelog)"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer-build/consumer"
echo "--- consumer_static (tracelog::tracelog_static)"
"$tmp/consumer-build/consumer_static"

# ---- (b) pkg-config consumer ---------------------------------------------
step "(b) pkg-config consumer"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc_shared=$(pkg-config --cflags --libs tracelog)
echo "pkg-config --cflags --libs tracelog: $pc_shared"
# shellcheck disable=SC2086 # word splitting of flags is intended
"$CC" $CFLAGS -o "$tmp/consumer-pc" "$consumer_src/main.c" $pc_shared
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer-pc"

# Static: same flags with --static, libtracelog.a instead of -ltracelog.
pc_static=$(pkg-config --static --cflags --libs tracelog)
echo "pkg-config --static --cflags --libs tracelog: $pc_static"
pc_static_args=()
for arg in $pc_static; do
    if [[ $arg == -ltracelog ]]; then
        pc_static_args+=("$libdir/libtracelog.a")
    else
        pc_static_args+=("$arg")
    fi
done
# shellcheck disable=SC2086
"$CC" $CFLAGS -o "$tmp/consumer-pc-static" "$consumer_src/main.c" "${pc_static_args[@]}"
"$tmp/consumer-pc-static"

# ---- (d) what the .pc requires is what the library needs -------------------
step "(d) tracelog.pc requires what libtracelog.so needs, and nothing else"
needed=$(readelf -d "$libdir/libtracelog.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "libtracelog.so needs: $needed"
requires=$(sed -n 's/^Requires.private: *//p' "$pcfile")
echo "tracelog.pc Requires.private: $requires"
for mod in $requires; do
    for l in $(pkg-config --libs-only-l "$mod"); do
        [[ " $needed" == *" lib${l#-l}.so"* ]] || fail "tracelog.pc requires $mod ($l), which libtracelog.so does not use"
    done
done
for lib in $needed; do
    case $lib in libc.so.* | libm.so.* | libpthread.so.* | librt.so.* | ld-linux*) continue ;; esac
    covered=0
    for mod in $requires; do
        for l in $(pkg-config --libs-only-l "$mod"); do
            [[ $lib == "lib${l#-l}.so"* ]] && covered=1
        done
    done
    [[ $covered == 1 ]] || fail "libtracelog.so needs $lib, which tracelog.pc does not list"
done

# ---- (e) static links as README.md says ----------------------------------------
step "(e) libtracelog.a linked in, the system's shared libraries beside it (README.md)"
# shellcheck disable=SC2046,SC2086
"$CC" $CFLAGS -o "$tmp/consumer-bstatic" "$consumer_src/main.c" $(pkg-config --cflags tracelog) \
    -Wl,-Bstatic $(pkg-config --libs tracelog) -Wl,-Bdynamic $(pkg-config --libs libzstd libcbor) -lpthread -lm
"$tmp/consumer-bstatic"
if readelf -d "$tmp/consumer-bstatic" | grep -q 'Shared library: \[libtracelog'; then
    fail "consumer-bstatic needs libtracelog.so: libtracelog.a was not linked in"
fi
echo "ok  no libtracelog.so among its shared libraries"

step "(e) fully static (-static), where every dependency has its static library"
missing_a=""
for l in $(pkg-config --static --libs-only-l tracelog); do
    [[ $l == -ltracelog ]] && continue
    a=$("$CC" -print-file-name="lib${l#-l}.a")
    [[ $a == /* && -e $a ]] || missing_a+=" lib${l#-l}.a"
done
if [[ -n $missing_a ]]; then
    echo "skipped: no$missing_a on this system (README.md says what to do then: the link above)"
elif [[ -n $CFLAGS ]]; then
    echo "skipped: the sanitizers' runtimes do not link statically"
else
    # shellcheck disable=SC2046
    "$CC" -static -o "$tmp/consumer-static" "$consumer_src/main.c" $(pkg-config --static --cflags --libs tracelog)
    "$tmp/consumer-static"
    if readelf -d "$tmp/consumer-static" 2>/dev/null | grep -q 'Shared library'; then
        fail "consumer-static is not static"
    fi
fi

step "OK"
