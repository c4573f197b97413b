#!/usr/bin/env python3
"""Checks a Chrome trace (ptlog convert --to chrome) against the Trace Event
Format rules that Perfetto UI, chrome://tracing and speedscope rely on:

- a JSON object with a "traceEvents" list, "displayTimeUnit" ms or ns;
- every event has a string name and ph, integer pid and tid in 0..2^31-1;
- every event but metadata ("M") has a number ts; those ts never decrease;
- instant events ("i") have a scope s of g, p or t;
- metadata events are process_name / thread_name with a string args.name;
- every process and every thread that has events is named before its first
  event;
- per thread, B and E balance: an E closes the innermost open B of the same
  name, never before it; nothing is left open at the end;
- args, when present, is an object;
- one thread (pid, tid) stands for one pthread: args.pthread, when present,
  is the same on every event of that thread, and different threads of a
  process have different pthreads.

Usage: check_chrome.py TRACE.json   (exit 0 if valid; else prints why, exit 1)
"""
import json
import sys

INT31 = 2**31


def fail(msg):
    print("check_chrome: " + msg)
    sys.exit(1)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def main(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not an object with a traceEvents list")
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        fail("displayTimeUnit must be ms or ns")
    named_processes, named_threads = set(), set()
    stacks = {}      # (pid, tid) -> [(name, ts)]
    pthread_of = {}  # (pid, tid) -> pthread
    thread_of = {}   # (pid, pthread) -> tid
    last_ts = None
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d (%s)" % (i, json.dumps(e)[:120])
        if not isinstance(e, dict):
            fail(where + ": not an object")
        for key in ("name", "ph"):
            if not isinstance(e.get(key), str):
                fail(where + ": missing or non-string " + key)
        for key in ("pid", "tid"):
            if not is_int(e.get(key)) or not 0 <= e[key] < INT31:
                fail(where + ": %s must be an integer in 0..2^31-1" % key)
        if "args" in e and not isinstance(e["args"], dict):
            fail(where + ": args is not an object")
        ph, pid, tid = e["ph"], e["pid"], e["tid"]
        if ph == "M":
            if e["name"] not in ("process_name", "thread_name"):
                fail(where + ": unexpected metadata event")
            if not isinstance(e.get("args", {}).get("name"), str):
                fail(where + ": metadata without args.name")
            (named_processes if e["name"] == "process_name" else named_threads).add(
                pid if e["name"] == "process_name" else (pid, tid))
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            fail(where + ": missing ts")
        if last_ts is not None and ts < last_ts:
            fail(where + ": ts %r before the previous event's %r" % (ts, last_ts))
        last_ts = ts
        if pid not in named_processes:
            fail(where + ": process %d has no process_name before its first event" % pid)
        if (pid, tid) not in named_threads:
            fail(where + ": thread %d/%d has no thread_name before its first event" % (pid, tid))
        pthread = e.get("args", {}).get("pthread")
        if pthread is not None:
            if pthread_of.setdefault((pid, tid), pthread) != pthread:
                fail(where + ": thread %d/%d stands for two pthreads" % (pid, tid))
            if thread_of.setdefault((pid, pthread), tid) != tid:
                fail(where + ": pthread %s of process %d is on two threads" % (pthread, pid))
        stack = stacks.setdefault((pid, tid), [])
        if ph == "B":
            stack.append((e["name"], ts))
        elif ph == "E":
            if not stack:
                fail(where + ": E without an open B on its thread")
            name, begin = stack.pop()
            if name != e["name"]:
                fail(where + ": E closes %r, but the innermost open slice is %r" % (e["name"], name))
            if ts < begin:
                fail(where + ": E before its B")
        elif ph == "i":
            if e.get("s") not in ("g", "p", "t"):
                fail(where + ": instant event without scope s")
        else:
            fail(where + ": unexpected phase " + ph)
    for (pid, tid), stack in stacks.items():
        if stack:
            fail("thread %d/%d ends with open slices %r" % (pid, tid, [n for n, _ in stack]))


if __name__ == "__main__":
    main(sys.argv[1])
