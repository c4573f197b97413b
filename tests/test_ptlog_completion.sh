#!/bin/bash
# tools/ptlog/ptlog.bash-completion completes in plain bash (no bash-completion
# package: it said "_init_completion: command not found" before) and with the
# package where it is installed (.ci/run installs it): commands, formats, the
# --ts forms, --color=WHEN, files; and for every command, the options its
# --help lists (so that a new option cannot be left out of the completion).
. "$(dirname "$0")/ptlog/lib.sh"
COMPLETION=$SRC/tools/ptlog/ptlog.bash-completion
mkdir files && touch files/a.ptl files/ab.json

# complete MODE LINE: the completions bash would offer for LINE (the cursor at its end), one per line.
complete_line() {
    local mode=$1 line=$2 pre=
    [ "$mode" = package ] && pre='. /usr/share/bash-completion/bash_completion;'
    # shellcheck disable=SC2016
    PATH=$(dirname "$PTLOG"):$PATH bash --norc --noprofile -c "$pre"'
        . "$1" || exit 9
        COMP_LINE=$2 COMP_POINT=${#2}
        read -ra COMP_WORDS <<<"$2"
        [[ $2 == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _ptlog ptlog "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
        printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$COMPLETION" "$line" 2>"$T/err"
}
# expect MODE LINE WORDS...: the completions are exactly WORDS (in any order).
expect() {
    local mode=$1 line=$2
    shift 2
    local got want
    got=$(complete_line "$mode" "$line" | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    [ "$got" = "$want" ] && ok || bad "$mode: '$line': got '$got', want '$want' $(head -c 200 "$T/err")"
}
# has MODE LINE WORD...: the completions include every WORD.
has() {
    local mode=$1 line=$2 w got
    shift 2
    got=" $(complete_line "$mode" "$line" | tr '\n' ' ')"
    for w; do
        [[ $got == *" $w "* ]] && ok || bad "$mode: '$line': '$w' missing from '$got' $(head -c 200 "$T/err")"
    done
}

modes=(plain)
if [ -f /usr/share/bash-completion/bash_completion ]; then modes+=(package); else
    echo "(the bash-completion package is not installed: plain bash only)"
fi
for mode in "${modes[@]}"; do
    expect "$mode" "ptlog con" convert
    expect "$mode" "ptlog convert app.ptl --to " json jsonl chrome perfetto ptl
    expect "$mode" "ptlog convert app.ptl --ts " ns text relative
    expect "$mode" "ptlog dump --col" --color=
    expect "$mode" "ptlog dump --color=al" always
    expect "$mode" "ptlog dump files/a" files/a.ptl files/ab.json
    expect "$mode" "ptlog help me" merge
    for cmd in dump info verify convert filter merge record attach top; do
        src=$cmd
        [ "$cmd" = attach ] && src=record # attach --help: "The options of record apply"
        opts=$("$PTLOG" "$src" --help | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u)
        [ -n "$opts" ] || bad "$cmd --help lists no option"
        # shellcheck disable=SC2086
        has "$mode" "ptlog $cmd --" $(printf '%s\n' $opts | sed 's/^--color$/--color=/')
    done
done

finish
