#!/bin/bash
# Each command's --help, what the command accepts, and the man page agree:
#   - the options a command's --help lists are exactly those it accepts
#     (every option named anywhere in the help texts or the man page is tried
#     on every command: an "unknown option" error means not accepted);
#   - every option a --help lists is in the man page, and every option the
#     man page names is accepted by some command;
#   - an OPTIONS entry of the man page that names its commands, "(dump)",
#     "(convert, merge; ...)", "(with --follow, top)", names exactly those
#     that accept it; -f, -o, -q are taken exactly where --follow,
#     --output, --quiet are;
#   - issue 29's nits stay fixed: one ENVIRONMENT section, verify's exit
#     status once, dump's line format with "tid KTID", dump --hex as the man
#     page says, attach with every stream policy, convert --follow's note.
. "$(dirname "$0")/ptlog/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the man page"; exit 77; }
MAN=$SRC/tools/ptlog/ptlog.1
COMMANDS="dump info verify convert filter merge record attach top"

# help_opts CMD: the long options CMD's --help lists (the option column of its option lines).
help_opts() {
    local src=$1
    [ "$1" = attach ] && src=record # attach --help: "The options of record apply"
    { "$PTLOG" "$src" --help | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p'
      # merge: "The event selection options of filter also apply"
      if "$PTLOG" "$1" --help | grep -q 'event selection options of filter also apply'; then
          "$PTLOG" filter --help | sed -n 's/^  \(--[a-z][a-z-]*\) .*/\1/p' | grep -E -- "--(event|pid|tid|begin|end|no-system|limit|where)$"
      fi
      echo --help; } | sort -u
}
# accepts CMD OPT: 0 if CMD takes OPT (bare or with a value), 1 if it calls it unknown.
accepts() {
    local form
    for form in "$2" "$2=1"; do
        if ! (cd "$T" && timeout 5 "$PTLOG" "$1" "$form" </dev/null 2>&1 >/dev/null | grep -Eq 'unknown (or incomplete )?option'); then
            return 0
        fi
    done
    return 1
}

all=$( { for c in $COMMANDS; do help_opts "$c"; done
         sed 's/\\-/-/g; s/ -- .*//' "$MAN" | grep -o -- '--[a-z][a-z-]*'; } | sort -u)
: >accepted.txt
for c in $COMMANDS; do # the commands side by side: about 700 short runs in all
    help_opts "$c" >"help.$c"
    for o in $all; do
        accepts "$c" "$o" && echo "$o"
    done | sort -u >"accepts.$c" &
done
wait
for c in $COMMANDS; do
    sed "s/^/$c /" "accepts.$c" >>accepted.txt
    if cmp -s "help.$c" "accepts.$c"; then ok; else
        bad "$c: --help lists $(comm -23 "help.$c" "accepts.$c" | tr '\n' ' ')that it refuses, and not $(comm -13 "help.$c" "accepts.$c" | tr '\n' ' ')that it takes"
    fi
done

# The short forms likewise: -f, -o and -q only where the command has --follow, --output, --quiet
# (every command once took -o and -q, and ignored them).
for c in $COMMANDS; do
    for pair in f:follow o:output q:quiet; do
        short=-${pair%%:*} long=--${pair#*:}
        has=0 takes=0
        grep -qx -- "$long" "accepts.$c" && has=1
        accepts "$c" "$short" && takes=1
        [ "$has" = "$takes" ] && ok || bad "$c: takes $short: $takes, but $long: $has"
    done
done

python3 - "$MAN" accepted.txt $COMMANDS <<'PY' && ok || bad "the man page and the commands disagree (above)"
import re, sys
man, accepted_file, commands = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(man, encoding="utf-8").read()
plain = re.sub(r"\\f[BIPR]", "", text).replace("\\-", "-")
plain = "\n".join(line.split(" -- ")[0] for line in plain.split("\n"))  # a program's own options, after --
takes = {}
for line in open(accepted_file):
    cmd, opt = line.split()
    takes.setdefault(opt, set()).add(cmd)
problems = []
named = set(re.findall(r"--[a-z][a-z-]*", plain))
for opt in sorted(named - set(takes) - {"--version"}):
    problems.append("the man page names %s, which no command takes" % opt)
for opt, cmds in sorted(takes.items()):
    if opt != "--help" and opt not in named:
        problems.append("%s (%s) is not in the man page" % (opt, ", ".join(sorted(cmds))))
# OPTIONS entries: ".TP", a tag line, then a line that may start with "(scope)".
options = plain[plain.index(".SH OPTIONS"):plain.index(".SH", plain.index(".SH OPTIONS") + 4)]
lines = options.split("\n")
for i, line in enumerate(lines):
    if line != ".TP" or i + 2 >= len(lines):
        continue
    tag, desc = lines[i + 1], lines[i + 2]
    opts = re.findall(r"--[a-z][a-z-]*", tag)
    m = re.match(r"\(([^)]*)\)", desc)
    if not opts or not m:
        continue
    scope = m.group(1)
    want = {c for c in commands if re.search(r"\b%s\b" % c, scope)}
    for w in re.findall(r"(?:^|[;,] *)with (--[a-z-]+)", scope):
        want |= takes.get(w, set())
    if not want:
        continue
    for opt in opts:
        if takes.get(opt, set()) != want:
            problems.append("%s: the man page says (%s), but it is taken by %s" % (opt, scope, ", ".join(sorted(takes.get(opt, ())))))
if text.count(".SH ENVIRONMENT") != 1:
    problems.append("%d ENVIRONMENT sections" % text.count(".SH ENVIRONMENT"))
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY

"$PTLOG" verify --help >verify.txt
[ "$(grep -c 'Exit status' verify.txt)" = 1 ] && ok || bad "verify --help: exit status $(grep -c 'Exit status' verify.txt) times"
"$PTLOG" dump --help >dump.txt
grep -q '^  TIME \[DELTA\] PID TID \[tid KTID' dump.txt && ok || bad "dump --help: the line format lacks 'tid KTID'"
grep -q -- '--hex  *every payload raw' dump.txt && grep -q 'Print every payload raw' "$MAN" && ok || bad "dump --hex: help and man page differ"
"$PTLOG" attach --help >attach.txt
grep -q 'flush stream policy (the default)' attach.txt && grep -q 'with loop or until-full' attach.txt &&
    ok || bad "attach --help does not say what each stream policy does"
# convert --follow's "jsonl only" note belongs to --follow (it once followed --writer-pid's text).
"$PTLOG" convert --help >convert.txt
[ "$(grep -A4 -- '-f, --follow' convert.txt | grep -c 'with --to jsonl only')" = 1 ] && ok ||
    bad "convert --help: the jsonl note is not under --follow: $(grep -A6 -- '-f, --follow' convert.txt)"

finish
