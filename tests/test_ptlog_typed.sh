#!/bin/bash
# Typed payloads in ptlog (tools/ptlog/fields.c, README.md "Typed events"):
# dump shows fields by name, text quoted and escaped, a payload whose size is
# not its schema's flagged and decoded as far as it fits; --hex keeps the
# raw bytes; untyped events stay as before. The log is written with the
# writer API by tests/ptlog/make_typed.c.
. "$(dirname "$0")/ptlog/lib.sh"

MAKE_TYPED=${TL_BUILD_DIR:?}/tests/make_typed
"$MAKE_TYPED" typed.ptl || { echo "FAIL: make_typed"; exit 1; }

expect_rc 0 "dump typed" "$PTLOG" dump --relative typed.ptl
cat >want.txt <<'W'
0.000000000 7 0x9 net.rx { len = 500, port = 443, iface = "eth0", latency = 0.000231, big = 9007199254740992, delta = 0, state = IDLE, mode = 0, ok = false }
0.000001000 7 0x9 net.rx { len = 1000, port = 80, iface = "eth1", latency = 0.000462, big = 9007199254740993, delta = -1, state = BUSY, mode = READ, ok = true }
0.000002000 7 0x9 net.rx { len = 1500, port = 443, iface = "lo \"x\"", latency = 0.000693, big = 9007199254740994, delta = -2, state = 2, mode = WRITE, ok = false }
0.000003000 7 0x9 net.rx { len = 2000, port = 80, iface = "eth0", latency = 0.000924, big = 9007199254740995, delta = -3, state = IDLE, mode = READ|WRITE, ok = true }
0.000004000 7 0x9 net.rx { len = 2500, port = 443, iface = "eth1", latency = 0.001155, big = 9007199254740996, delta = -4, state = BUSY, mode = 0x80, ok = false }
0.000005000 7 0x9 net.rx { len = 3000, port = 80, iface = "lo \"x\"", latency = 0.001386, big = 18446744073709551615, delta = -5, state = 2, mode = READ, ok = true }
0.000010000 7 0x9 net.rx [short: 10 of 48 bytes] { len = 1, port = 2 }
0.000011000 7 0x9 net.rx [long: 51 of 48 bytes] { len = 1, port = 2, iface = "", latency = 0, big = 0, delta = 0, state = IDLE, mode = 0, ok = false }
0.000012000 7 0x9 msg { code = 1, text = "hello" }
0.000013000 7 0x9 plain "raw"
0.000014000 7 0x9 req.begin { req = 12 }
0.000015000 7 0x9 req.end { req = 12, status = -5 }
W
expect_same "typed dump" want.txt "$T/out"

# --hex: the raw payload, no braces.
expect_rc 0 "dump --hex" "$PTLOG" dump --relative --hex typed.ptl
grep -q '^0.000012000 7 0x9 msg 0100000068656c6c6f$' "$T/out" && ok || bad "--hex msg: $(sed -n 9p "$T/out")"
grep -c '{' "$T/out" | grep -qx 0 && ok || bad "--hex still decodes"

finish
