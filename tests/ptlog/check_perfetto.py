"""Reads `protoc --decode=perfetto.protos.Trace` text (tests/ptlog/perfetto_trace.proto)
and rebuilds what Perfetto would show: tracks, events with absolute times and
resolved names, counters. Used by tests/test_ptlog_perfetto.sh:

    python3 check_perfetto.py DECODED.txt > model.json

Structural rules are checked on the way (an assertion fails the test):
every field is one the subset names (protoc prints unknown ones as bare
numbers), the first packet clears the incremental state, every iid is
interned before its use and never with two values, every track is described
once before its first event, slices balance per track.
"""
import json
import re
import sys


def parse(text):
    """protoc's text format into nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*) \{", line)
        if m:
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*): (.*)", line)
        assert m, "unexpected line (a field the subset does not know?): %r" % line
        value = m.group(2)
        if value.startswith('"'):
            value = value[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8")
        elif re.fullmatch(r"-?[0-9]+", value):
            value = int(value)
        elif value in ("true", "false"):
            value = value == "true"
        elif re.fullmatch(r"-?[0-9.e+-]+|-?inf|nan", value):
            value = float(value)
        cur.setdefault(m.group(1), []).append(value)
    assert not stack, "unbalanced braces"
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    if v is None:
        return default
    assert len(v) == 1, "%s repeated" % key
    return v[0]


def main():
    packets = parse(open(sys.argv[1], encoding="utf-8").read()).get("packet", [])
    assert packets, "no packet"
    first = packets[0]
    assert one(first, "sequence_flags") == 1, "the first packet must clear the incremental state"
    clocks = {one(c, "clock_id"): c for c in one(first, "clock_snapshot")["clocks"]}
    assert one(clocks[64], "is_incremental") is True
    clock = one(clocks[64], "timestamp")
    assert one(clocks[1], "timestamp") == clock == one(clocks[6], "timestamp")
    interned = {"event_names": {}, "debug_annotation_names": {}, "debug_annotation_string_values": {}}
    seen = {kind: set() for kind in interned}  # the names interned, to find one interned twice in linear time
    tracks, events, order = {}, [], []
    open_slices = {}
    for p in packets:
        assert one(p, "trusted_packet_sequence_id") == 1
        for d in p.get("interned_data", []):
            for kind, table in interned.items():
                for e in d.get(kind, []):
                    iid, name = one(e, "iid"), one(e, "name", one(e, "str"))
                    assert iid not in table, "%s iid %d interned twice" % (kind, iid)
                    assert name not in seen[kind], "%s %r interned twice" % (kind, name)
                    seen[kind].add(name)
                    table[iid] = name
        td = one(p, "track_descriptor")
        if td:
            uuid = one(td, "uuid")
            assert uuid not in tracks, "track %d described twice" % uuid
            t = {"uuid": uuid, "parent": one(td, "parent_uuid")}
            if "process" in td:
                pr = one(td, "process")
                t.update(kind="process", pid=one(pr, "pid"), name=one(pr, "process_name"),
                         cmdline=pr.get("cmdline", []))
            elif "thread" in td:
                th = one(td, "thread")
                t.update(kind="thread", pid=one(th, "pid"), tid=one(th, "tid"), name=one(th, "thread_name"))
                assert tracks[t["parent"]]["kind"] == "process" and tracks[t["parent"]]["pid"] == t["pid"]
            else:
                assert one(td, "counter") is not None
                t.update(kind="counter", name=one(td, "name"))
            tracks[uuid] = t
            order.append(uuid)
        te = one(p, "track_event")
        if te is None:
            continue
        assert one(p, "sequence_flags") == 2, "an event packet needs the incremental state"
        if one(p, "timestamp_clock_id") == 1:
            ts = one(p, "timestamp")
        else:
            assert one(p, "timestamp_clock_id") is None
            clock += one(p, "timestamp")
            ts = clock
        track = one(te, "track_uuid")
        assert track in tracks, "event on undescribed track %d" % track
        ev = {"ts": ts, "track": track, "type": one(te, "type")}
        if "name_iid" in te:
            ev["name"] = interned["event_names"][one(te, "name_iid")]
        elif "name" in te:
            ev["name"] = one(te, "name")
        if "counter_value" in te:
            ev["value"] = one(te, "counter_value")
        args = {}
        for a in te.get("debug_annotations", []):
            name = interned["debug_annotation_names"][one(a, "name_iid")] if "name_iid" in a else one(a, "name")
            (key, value), = [(k, v[0]) for k, v in a.items() if k not in ("name_iid", "name")]
            if key == "string_value_iid":
                value = interned["debug_annotation_string_values"][value]
            args[name] = value
        if args:
            ev["args"] = args
        stack = open_slices.setdefault(track, [])
        if ev["type"] == "TYPE_SLICE_BEGIN":
            stack.append(ev["name"])
        elif ev["type"] == "TYPE_SLICE_END":
            assert stack, "slice end without begin on track %d" % track
            ev["name"] = stack.pop()
        events.append(ev)
    assert not any(open_slices.values()), "slices left open: %r" % open_slices
    json.dump({"tracks": [tracks[u] for u in order], "events": events, "interned": {k: len(v) for k, v in interned.items()}},
              sys.stdout, indent=1)


main()
