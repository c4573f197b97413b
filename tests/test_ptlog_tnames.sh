#!/bin/bash
# Thread names (format 1.2) in ptlog: dump prints "(NAME)" after the kernel
# tid, escaped when the program chose bytes that do not print safely; info
# --threads has a NAME column and JSON "name"; JSON and JSON Lines carry
# "tname" ("tname_hex" for bytes that are not UTF-8) and an import of them
# writes a log that gives them back; Chrome names threads by them (tid = the
# kernel tid, pid = the event's), again after a rename; merge keeps them; a
# bad "tname" is an input error naming the event and the key; logs without
# names (format 1.1) print as before.
. "$(dirname "$0")/ptlog/lib.sh"

head='{"format":{"schema":"tracelog","version":1},"attributes":{"trace_name":"named","creation_time_ns":1714564800000000000},"event_types":[{"id":1,"name":"tick"}]}'
{
    echo "$head"
    echo '{"ts":1714564800000000100,"id":1,"pid":42,"tid":7,"ktid":100,"tname":"main","data":""}'
    echo '{"ts":1714564800000000200,"id":1,"pid":42,"tid":8,"ktid":101,"tname":"worker 1","data":"41"}'
    echo '{"ts":1714564800000000300,"id":1,"pid":42,"tid":9,"ktid":102,"tname":"w\u001b[31m(x)","data":""}'
    echo '{"ts":1714564800000000400,"id":1,"pid":42,"tid":10,"ktid":103,"tname_hex":"77ff","data":""}'
    echo '{"ts":1714564800000000500,"id":1,"pid":42,"tid":11,"data":""}'
    echo '{"ts":1714564800000000600,"id":1,"pid":43,"tid":7,"ktid":200,"tname":"other","data":""}'
} >named.jsonl

# ---- JSON Lines -> .ptl -> dump ----------------------------------------------------------------
expect_rc 0 "jsonl with tname to .ptl" "$PTLOG" convert named.jsonl --to ptl -o named.ptl
expect_rc 0 "dump" "$PTLOG" dump named.ptl
cut -d' ' -f2- "$T/out" >got
cat >want <<'EOF'
42 0x7 tid 100 (main) tick
42 0x8 tid 101 (worker 1) tick "A"
42 0x9 tid 102 ("w\x1b[31m(x)") tick
42 0xa tid 103 ("w\xff") tick
42 0xb tick
43 0x7 tid 200 (other) tick
EOF
expect_same "dump: the name after the kernel tid, escaped when needed" want got
grep -q "$(printf '\033')" "$T/out" && bad "dump printed the name's escape byte raw" || ok
run bash -c "cat named.ptl | '$PTLOG' dump -"
cut -d' ' -f2- "$T/out" >got
expect_same "dump from a pipe: the same names" want got
expect_rc 0 "dump --tid KTID" "$PTLOG" dump --tid 101 named.ptl
grep -q '^2024-05-01T12:00:00.000000200Z 42 0x8 tid 101 (worker 1) tick "A"$' "$T/out" && ok ||
    bad "--tid 101: $(cat "$T/out")"

# ---- info --threads --------------------------------------------------------------------------------
expect_rc 0 "info --threads" "$PTLOG" info --threads named.ptl
sed -n '/^threads:$/,$p' "$T/out" | awk 'NR > 1 { print $1, $2, $3, $NF }' >got
printf '%s\n' 'PID TID KTID NAME' '42 0x7 100 main' '42 0x8 101 1' '42 0x9 102 "w\x1b[31m(x)"' \
    '42 0xa 103 "w\xff"' '42 0xb - -' '43 0x7 200 other' >want
expect_same "info --threads: NAME, the last column" want got
grep -q ' 0.000000000 worker 1$' "$T/out" && ok || bad "info --threads: a name with a blank: $(grep 0x8 "$T/out")"
expect_rc 0 "info --threads --json" "$PTLOG" info --threads --json named.ptl
grep -q '{"pid":42,"tid":8,"ktid":101,"name":"worker 1","count":1,' "$T/out" && ok ||
    bad "info --json: no thread name: $(grep -o '"threads".*' "$T/out" | head -c 300)"
grep -q '"tid":11,"count"' "$T/out" && ok || bad "info --json: a thread without a name has no name key"

# ---- JSON Lines and JSON: tname, round trips --------------------------------------------------------
expect_rc 0 "to jsonl" "$PTLOG" convert named.ptl --to jsonl -o a.jsonl
grep -q '"tid":8,"ktid":101,"tname":"worker 1","address"' a.jsonl && ok || bad "jsonl: tname: $(sed -n 3p a.jsonl)"
grep -q '"tname":"w\\u001b\[31m(x)"' a.jsonl && ok || bad "jsonl: control bytes escaped: $(sed -n 4p a.jsonl)"
grep -q '"tname_hex":"77ff"' a.jsonl && ok || bad "jsonl: the bytes of a name that is not UTF-8"
grep '"tid":11,' a.jsonl | grep -q tname && bad "jsonl: tname for an unnamed thread" || ok
expect_rc 0 "jsonl back to .ptl" "$PTLOG" convert a.jsonl --to ptl -o b.ptl
expect_rc 0 "and to jsonl again" "$PTLOG" convert b.ptl --to jsonl -o b.jsonl
expect_same "ptl -> jsonl -> ptl -> jsonl keeps every name" a.jsonl b.jsonl
expect_rc 0 "to json" "$PTLOG" convert named.ptl --to json -o a.json
expect_rc 0 "json back to .ptl" "$PTLOG" convert a.json --to ptl -o c.ptl
expect_rc 0 "dump it" "$PTLOG" dump c.ptl
cut -d' ' -f2- "$T/out" >got
cut -d' ' -f2- <("$PTLOG" dump named.ptl) >want
expect_same "ptl -> json -> ptl keeps every name" want got

# ---- a rename ---------------------------------------------------------------------------------------
{
    echo "$head"
    echo '{"ts":1714564800000000100,"id":1,"pid":42,"tid":8,"ktid":101,"tname":"worker 1","data":""}'
    echo '{"ts":1714564800000000200,"id":1,"pid":42,"tid":8,"ktid":101,"tname":"worker 1b","data":""}'
} >rename.jsonl
expect_rc 0 "dump of a rename (jsonl: each event its own name)" "$PTLOG" dump rename.jsonl
grep -c '(worker 1) \|(worker 1b) ' "$T/out" | grep -qx 2 && ok || bad "rename: $(cat "$T/out")"
expect_rc 0 "chrome of a rename" "$PTLOG" convert rename.jsonl --to chrome -o rename.chrome
grep -o '{"name":"thread_name"[^}]*}}' rename.chrome >got
printf '%s\n' '{"name":"thread_name","ph":"M","pid":42,"tid":101,"args":{"name":"worker 1"}}' \
    '{"name":"thread_name","ph":"M","pid":42,"tid":101,"args":{"name":"worker 1b"}}' >want
expect_same "chrome: thread_name again after a rename" want got
expect_rc 0 "rename to .ptl" "$PTLOG" convert rename.jsonl --to ptl -o rename.ptl
expect_rc 0 "info --threads of the renamed thread" "$PTLOG" info --threads rename.ptl
grep -q ' worker 1b$' "$T/out" && ok || bad "info: the latest name: $(tail -1 "$T/out")"

# ---- Chrome ------------------------------------------------------------------------------------------
expect_rc 0 "to chrome" "$PTLOG" convert named.ptl --to chrome -o a.chrome
grep -o '{"name":"thread_name"[^}]*}}' a.chrome >got
printf '%s\n' '{"name":"thread_name","ph":"M","pid":42,"tid":100,"args":{"name":"main"}}' \
    '{"name":"thread_name","ph":"M","pid":42,"tid":101,"args":{"name":"worker 1"}}' \
    '{"name":"thread_name","ph":"M","pid":42,"tid":102,"args":{"name":"w\u001b[31m(x)"}}' \
    '{"name":"thread_name","ph":"M","pid":42,"tid":103,"args":{"name":"w\ufffd"}}' \
    '{"name":"thread_name","ph":"M","pid":42,"tid":1,"args":{"name":"pthread 0xb"}}' \
    '{"name":"thread_name","ph":"M","pid":43,"tid":200,"args":{"name":"other"}}' >want
expect_same "chrome: thread_name is the log's name, tid the kernel tid, pid the event's" want got

# ---- merge -----------------------------------------------------------------------------------------
expect_rc 0 "merge with an unnamed log" "$PTLOG" merge named.ptl "$SRC/samples/golden/append.ptl" -o m.ptl
expect_rc 0 "dump the merge" "$PTLOG" dump --pid 42 m.ptl
cut -d' ' -f2- "$T/out" | grep -c '(main)\|(worker 1)' | grep -qx 2 && ok || bad "merge: names lost: $(head -3 "$T/out")"

# ---- bad names in JSON: exit 3, the event and the key named -------------------------------------------
bad_name() { # DESC JSON-EVENT REGEX
    { echo "$head"; echo "$2"; } >bad.jsonl
    expect_rc 3 "$1" "$PTLOG" convert bad.jsonl --to ptl -o bad.ptl
    expect_err "$3" "$1"
}
bad_name "tname without ktid" '{"ts":1,"id":1,"pid":1,"tid":7,"tname":"x"}' \
    'bad.jsonl:2: event 0: key "tname": a thread name needs the thread.s "ktid"'
bad_name "empty tname" '{"ts":1,"id":1,"pid":1,"tid":7,"ktid":3,"tname":""}' 'event 0: key "tname": expected'
bad_name "tname not a string" '{"ts":1,"id":1,"pid":1,"tid":7,"ktid":3,"tname":5}' 'event 0: key "tname": expected'
bad_name "tname of 65 bytes" \
    '{"ts":1,"id":1,"pid":1,"tid":7,"ktid":3,"tname":"01234567890123456789012345678901234567890123456789012345678901234"}' \
    'event 0: key "tname": expected null or a thread name of 1 to 64 bytes'
bad_name "tname_hex not hex" '{"ts":1,"id":1,"pid":1,"tid":7,"ktid":3,"tname_hex":"zz"}' 'key "tname_hex": expected hex'
{ echo "$head"; echo '{"ts":1,"id":1,"pid":1,"tid":7,"ktid":3,"tname":null}'; } >null.jsonl
expect_rc 0 "tname null: no name" "$PTLOG" convert null.jsonl --to ptl -o null.ptl

# ---- names that come back: dump and JSON Lines keep the last name's text and know a .ptl reader's
# names by their address (issue 27); a name that returns after another, or two threads of the same
# name, must print their own name (a memo of the wrong name fails this) ----------------------------------
{
    echo "$head"
    i=0
    for n in 0 1 0 0 2 1 2 0; do
        case $n in 0) t=7 k=100 nm=main ;; 1) t=8 k=101 nm="worker 1" ;; 2) t=9 k=102 nm=main ;; esac
        i=$((i + 1))
        echo "{\"ts\":$((1714564800000000100 + i)),\"id\":1,\"pid\":42,\"tid\":$t,\"ktid\":$k,\"tname\":\"$nm\",\"data\":\"\"}"
    done
} >back.jsonl
expect_rc 0 "names that come back to .ptl" "$PTLOG" convert back.jsonl --to ptl -o back.ptl
expect_rc 0 "dump names that come back" "$PTLOG" dump back.ptl
got=$(cut -d' ' -f5-6 "$T/out" | tr '\n' ',')
[ "$got" = "100 (main),101 (worker,100 (main),100 (main),102 (main),101 (worker,102 (main),100 (main)," ] && ok ||
    bad "dump of names that come back: $got"
expect_rc 0 "jsonl of names that come back" "$PTLOG" convert back.ptl --to jsonl
got=$(grep -o '"ktid":[0-9]*,"tname":"[^"]*"' "$T/out" | tr '\n' ',')
want='"ktid":100,"tname":"main","ktid":101,"tname":"worker 1","ktid":100,"tname":"main","ktid":100,"tname":"main",'
want+='"ktid":102,"tname":"main","ktid":101,"tname":"worker 1","ktid":102,"tname":"main","ktid":100,"tname":"main",'
[ "$got" = "$want" ] && ok || bad "jsonl of names that come back: $got"

# ---- a log without names (format 1.1): as before ---------------------------------------------------------
expect_rc 0 "dump a 1.1 log" "$PTLOG" dump "$SRC/samples/golden/1.1/threads.ptl"
grep -q '(' "$T/out" && bad "a 1.1 log shows thread names" || ok
expect_rc 0 "info --threads of a 1.1 log" "$PTLOG" info --threads "$SRC/samples/golden/1.1/threads.ptl"
sed -n '/^threads:$/,$p' "$T/out" | awk 'NR > 2 && $NF != "-"' | grep -q . && bad "1.1: a NAME that is not -" || ok

finish
