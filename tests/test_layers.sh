#!/usr/bin/env bash
# The layering libtracelog/README.md states, checked on the sources: which
# folders each folder's files may include, that a folder's internal.h is
# included only inside that folder (so are stream/'s layout.h and
# consumer_internal.h: the mapping's layout and the consumer's state), that the recorder knows nothing of
# POSIX, and that ptlog uses the public headers only (plus the header-only
# helpers of common/, array.h, text.h, heap.h and digits.h, which define no symbol and link nothing).
set -u
root=${TL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 1

declare -A allowed=(
    [common]="common"
    [format]="common format"
    [writer]="common format writer"
    [reader]="common format reader"
    [stream]="common stream"
    [xproc]="common stream xproc"
    [recorder]="common format stream writer xproc recorder"
    [posix]="common format stream xproc recorder posix"
)
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# Every folder of libtracelog/ has a row: a new layer must be placed.
for dir in libtracelog/*/; do
    folder=$(basename "$dir")
    [[ -n ${allowed[$folder]+set} ]] || fail "libtracelog/$folder/ is in no layer of this script (and README.md)"
done

# Includes of the project's private headers: "folder/file.h".
for folder in "${!allowed[@]}"; do
    for file in libtracelog/"$folder"/*.[ch]; do
        [[ -e $file ]] || continue
        while IFS= read -r inc; do
            target=${inc%%/*}
            [[ $target == tracelog ]] && continue # the public headers: include/tracelog/
            [[ " ${allowed[$folder]} " == *" $target "* ]] ||
                fail "$file includes \"$inc\": $folder/ may include only ${allowed[$folder]}"
            if [[ ${inc#*/} == *internal.h || ${inc#*/} == layout.h ]] && [[ $target != "$folder" ]]; then
                fail "$file includes \"$inc\": only $target/ includes it"
            fi
        done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_.]*\)".*/\1/p' "$file")
    done
done

# The recorder drains any stream into any log: no POSIX in it.
if grep -n 'POSIX_\|trace_attr_t\|<trace\.h>\|posix_trace_' libtracelog/recorder/*.[ch]; then
    fail "libtracelog/recorder/ names POSIX (above)"
fi

# ptlog is a program like any other: public headers, and the header-only helpers of common/.
while IFS=: read -r file inc; do
    case $inc in
        common/array.h | common/text.h | common/heap.h | common/digits.h) ;;
        *) fail "$file includes \"$inc\": ptlog uses the public API (include/) only" ;;
    esac
done < <(grep -o '^#include "[a-z_]*/[a-z_.]*"' tools/ptlog/*.[ch] | sed 's/#include "\(.*\)"/\1/' |
    grep -v ':tracelog/')
for helper in libtracelog/common/array.h libtracelog/common/text.h libtracelog/common/heap.h libtracelog/common/digits.h; do
    if grep -n '^[a-z].*(' "$helper" | grep -v 'static inline'; then
        fail "$helper has a function that is not static inline: ptlog may no longer include it"
    fi
done

# Calls between files, from the objects (nm: what each defines, what it uses): within posix/ and
# between folders, no circle. Files that remain after taking away, again and again, every file
# that calls no other remaining file are on a circle (or call into one).
objects=${TL_BUILD_DIR:-build}/CMakeFiles/tracelog_objects.dir/libtracelog
if [[ -d $objects ]] && command -v nm >/dev/null; then
    edges=$(for o in "$objects"/*/*.o; do
        f=${o#"$objects"/}
        nm "$o" | awk -v f="${f%.o}" '$2 ~ /^[TDBR]$/ {print "D", f, $3} $1 == "U" {print "U", f, $2}'
    done | awk '$1 == "D" {def[$3] = $2; next} {use[$2 " " $3] = 1}
        END {for (k in use) {split(k, p, " "); if (p[2] in def && def[p[2]] != p[1]) print p[1], def[p[2]]}}' | sort -u)
    on_circle() { # edges on stdin: "from to"; prints the files left
        awk '{out[$1] = out[$1] " " $2; node[$1]; node[$2]}
            END {do {gone = 0; for (n in node) {k = 0; m = split(out[n], t, " ");
                    for (i = 1; i <= m; i++) if (t[i] in node) k++;
                    if (!k) {delete node[n]; gone = 1}}} while (gone);
                for (n in node) print n}'
    }
    left=$(grep '^posix/[^ ]* posix/' <<<"$edges" | on_circle | sort | tr '\n' ' ')
    [[ -z $left ]] || fail "posix/ files call each other in a circle: $left"
    left=$(awk '{split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1]) print a[1], b[1]}' <<<"$edges" | sort -u |
        on_circle | tr '\n' ' ')
    [[ -z $left ]] || fail "folders call each other in a circle: $left"
    (($(wc -l <<<"$edges") > 100)) || fail "only $(wc -l <<<"$edges") calls between files found: the patterns are broken"
else
    echo "(no objects in $objects: the call graph is not checked)"
fi

# The check itself must see something: a broken pattern would pass everything.
count=$(grep -h '^#include "[a-z_]*/' libtracelog/*/*.[ch] | wc -l)
((count > 100)) || fail "only $count private includes found: the patterns are broken"

if ((failures)); then
    echo "$failures layering failures"
    exit 1
fi
echo "layers ok: $count private includes checked"
