#!/usr/bin/env python3
"""report.py: puts together what run-lttng.sh measured (files in --work),
prints the comparison table with each target, and writes --json."""
import argparse
import json
import os
import statistics


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def load_lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    except OSError:
        pass
    return out


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def fmt(s, unit="ns", digits=1):
    if not s:
        return "n/a"
    return "%.*f %s [%.*f-%.*f]" % (digits, s["median"], unit, digits, s["min"], digits, s["max"])


targets = []


def target(what, value, bound, at_most, text):
    if value is None:
        met = None
    else:
        met = value <= bound if at_most else value >= bound
    targets.append({"what": what, "value": value, "bound": bound, "at_most": at_most, "target": text, "met": met})


def zero_loss(steps, lost_key):
    best = 0.0
    for s in steps:
        if s.get(lost_key, 1) == 0 and s["achieved_mev_s"] >= 0.98 * s["target_mev_s"]:
            best = max(best, s["target_mev_s"])
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--event-json")
    ap.add_argument("--versions", default="")
    a = ap.parse_args()
    w = a.work
    out = {"benchmark": "lttng", "versions": a.versions, "load_average_1min": os.getloadavg()[0]}

    tl = load(os.path.join(w, "tracelog_cost.json"), {})
    figs = tl.get("figures", {})
    lt = load(os.path.join(w, "lttng_cost.json"), {}).get("payloads", {})
    ltc = load(os.path.join(w, "lttng_cost_ctx.json"), {}).get("payloads", {})
    clock = figs.get("clock_gettime_realtime_ns")
    out["clock_gettime_ns"] = clock
    out["lttng_cost_discarded"] = load(os.path.join(w, "lttng_cost_discarded.json"), {}).get("discarded")
    out["lttng_cost_ctx_discarded"] = load(os.path.join(w, "lttng_cost_ctx_discarded.json"), {}).get("discarded")
    out["tracelog_events_lost_in_log_cost_runs"] = tl.get("events_lost_in_log_cost_runs")

    print("\nRecording cost, ns per event (median [min-max] of the runs; per thread with 2 threads)")
    print("clock_gettime(CLOCK_REALTIME): %s" % fmt(clock))
    hdr = "%-9s %-3s %-24s %-24s %-24s %-24s %-8s %s"
    print(hdr % ("payload", "thr", "tracelog FLUSH+log", "tracelog no log", "LTTng-UST", "LTTng + vpid,vtid,ip", "tl/LTTng", "target <= 0.5"))
    rec = []
    for p in ("16", "64", "256"):
        for t in ("1", "2"):
            tlog = figs.get("event_log_%sb_%st_ns" % (p, t))
            tnolog = figs.get("event_nolog_%sb_%st_ns" % (p, t))
            l = summary(lt.get(p, {}).get("ns_%st" % t, []))
            lc = summary(ltc.get(p, {}).get("ns_%st" % t, []))
            ratio = tlog["median"] / l["median"] if tlog and l else None
            ratio_ctx = tlog["median"] / lc["median"] if tlog and lc else None
            rec.append({"payload": int(p), "threads": int(t), "tracelog_log_ns": tlog, "tracelog_nolog_ns": tnolog,
                        "lttng_ns": l, "lttng_ctx_ns": lc, "ratio": ratio, "ratio_ctx": ratio_ctx})
            target("posix_trace_event / LTTng tracepoint, %s B, %s thread%s" % (p, t, "s" if t == "2" else ""),
                   ratio, 0.5, True, "<= 0.5x")
            print(hdr % (p + " B", t, fmt(tlog), fmt(tnolog), fmt(l), fmt(lc),
                         "%.2f" % ratio if ratio else "n/a",
                         "met" if ratio and ratio <= 0.5 else "MISSED"))
    out["recording"] = rec
    # Thread CPU time: what the load distorts least (elapsed time counts the time other jobs ran).
    print("1 thread, thread CPU time per event (the same runs)")
    cpu = []
    for p in ("16", "64", "256"):
        tlog = figs.get("event_log_%sb_1t_cpu_ns" % p)
        l = summary(lt.get(p, {}).get("cpu_ns_1t", []))
        ratio = tlog["median"] / l["median"] if tlog and l else None
        cpu.append({"payload": int(p), "tracelog_log_cpu_ns": tlog, "lttng_cpu_ns": l, "ratio": ratio})
        print("%-9s     tracelog FLUSH+log %-24s LTTng-UST %-24s tl/LTTng %s" % (
            p + " B", fmt(tlog), fmt(l), "%.2f" % ratio if ratio else "n/a"))
    out["recording_cpu_1t"] = cpu
    if clock and figs.get("event_log_16b_1t_ns"):
        target("posix_trace_event 16 B (log) / clock_gettime", figs["event_log_16b_1t_ns"]["median"] / clock["median"],
               2.0, True, "<= 2x")

    print("\n2 threads / 1 thread (aggregate events/s)")
    scal = []
    for p in ("16", "64", "256"):
        s_tl = figs.get("event_log_%sb_2t_speedup" % p)
        s_tn = figs.get("event_nolog_%sb_2t_speedup" % p)
        s_l = summary(lt.get(p, {}).get("speedup", []))
        scal.append({"payload": int(p), "tracelog_log": s_tl, "tracelog_nolog": s_tn, "lttng": s_l})
        print("  %3s B: tracelog log %s, tracelog no log %s, LTTng %s" % (p, fmt(s_tl, "x", 2), fmt(s_tn, "x", 2), fmt(s_l, "x", 2)))
    out["scaling"] = scal

    filt = summary(load(os.path.join(w, "lttng_filtered.json"), {}).get("ns", []))
    dis = summary(load(os.path.join(w, "lttng_disabled.json"), {}).get("ns", []))
    out["cheap"] = {"tracelog_filtered_ns": figs.get("event_filtered_ns"), "tracelog_stopped_ns": figs.get("event_stopped_ns"),
                    "tracelog_no_stream_ns": figs.get("event_no_stream_ns"), "lttng_filtered_ns": filt, "lttng_disabled_ns": dis}
    print("\nEvents that record nothing, ns per call")
    print("  filtered out: tracelog %s; LTTng (filter expression rejects it) %s" % (fmt(figs.get("event_filtered_ns"), digits=2), fmt(filt, digits=2)))
    print("  not enabled:  tracelog, stream stopped %s, no stream %s; LTTng, tracepoint not enabled %s" % (
        fmt(figs.get("event_stopped_ns"), digits=2), fmt(figs.get("event_no_stream_ns"), digits=2), fmt(dis, digits=2)))

    tls = load(os.path.join(w, "tracelog_sustained.json"), {}).get("sustained", {})
    lts = load_lines(os.path.join(w, "lttng_sustained.jsonl"))
    tsteps = tls.get("steps", [])
    if tsteps or lts:
        print("\nSustained rate, one paced producer, 16 B payloads: fraction of events lost per target rate")
        print("  %-8s %-34s %-34s" % ("M ev/s", "tracelog FLUSH (achieved, lost)", "LTTng discard (achieved, lost)"))
        rates = sorted({s["target_mev_s"] for s in tsteps} | {s["target_mev_s"] for s in lts})
        for r in rates:
            t = next((s for s in tsteps if s["target_mev_s"] == r), None)
            l = next((s for s in lts if s["target_mev_s"] == r), None)
            if l:
                total = l["events"] + l["warm_events"]
                l["fraction_lost"] = l["discarded"] / l["events"] if l["events"] else 0
                kept = total - l["discarded"]
                l["bytes_per_event"] = l["trace_bytes"] / kept if kept else 0
                l["bytes_per_s"] = l["trace_bytes"] * (l["events"] / total) / (l["elapsed_ns"] / 1e9) if total else 0
            print("  %-8g %-34s %-34s" % (
                r,
                "%.2f, %.4f %%" % (t["achieved_mev_s"], 100 * t["fraction_lost"]) if t else "n/a",
                "%.2f, %.4f %%" % (l["achieved_mev_s"], 100 * l["fraction_lost"]) if l else "n/a"))
        zt = zero_loss(tsteps, "lost")
        zl = zero_loss(lts, "discarded")
        out["sustained"] = {"seconds": tls.get("seconds"), "tracelog_steps": tsteps, "lttng_steps": lts,
                            "tracelog_zero_loss_mev_s": zt, "lttng_zero_loss_mev_s": zl}
        print("  highest zero-loss rate: tracelog %.1f M ev/s, LTTng %.1f M ev/s" % (zt, zl))
        target("zero-loss sustained rate, tracelog / LTTng", zt / zl if zl else None, 1.5, False, ">= 1.5x")

    sizes = load_lines(os.path.join(w, "sizes.jsonl"))
    if sizes:
        print("\nBytes per event on disk, same events (whole .ptl file; whole CTF trace directory)")
        out["sizes"] = []
        for s in sizes:
            if s["tracepoint"] != "event":
                print("  %3d B as 3 integer fields: CTF %.2f B/event" % (s["payload"], s["ctf_bytes"] / s["events"]))
                out["sizes"].append(dict(s, ctf_per_event=s["ctf_bytes"] / s["events"]))
                continue
            pe = s["ptl_bytes"] / s["events"]
            ce = s["ctf_bytes"] / s["events"]
            d = dict(s, ptl_per_event=pe, ctf_per_event=ce, ratio=pe / ce)
            out["sizes"].append(d)
            print("  %3d B payload, %d events: .ptl %.2f B/event, CTF %.2f B/event (data files only %.2f): ratio %.2f" % (
                s["payload"], s["events"], pe, ce, s["ctf_data_bytes"] / s["events"], pe / ce))
            if s["name"] != "ana":  # the analyzer's smaller copy of the same events
                target("bytes per event, .ptl / CTF, %d B payload" % s["payload"], pe / ce, 0.5, True, "<= 0.5x")

    reading = {r["key"]: r for r in load_lines(os.path.join(w, "reading.jsonl"))}
    if reading:
        out["reading"] = reading
        print("\nReading the same events (page cache warm; output thrown away): events/s, median [min-max]")
        for k, r in reading.items():
            r["events_per_s"] = r["events"] / r["median_s"]
            cpu = r.get("cpu_s") or 0
            print("  %-24s %8.2f M events/s  [%.2f-%.2f]  %s" % (
                k, r["events_per_s"] / 1e6, r["events"] / r["max_s"] / 1e6, r["events"] / r["min_s"] / 1e6,
                "%.2f M events per CPU-second" % (r["events"] / cpu / 1e6) if cpu else ""))

        def ratio(fast, slow):
            if fast in reading and slow in reading:
                return reading[slow]["median_s"] / reading[fast]["median_s"]
            return None
        pairs = [("ptlog dump / babeltrace2 text", "ptlog_dump", "bt2_text", 10.0),
                 ("pure decoding: offline_analyzer / babeltrace2 -o dummy", "offline_analyzer", "bt2_dummy", 6.0),
                 ("pure decoding: ptlog info (full pass) / babeltrace2 -o dummy", "ptlog_info_full", "bt2_dummy", 6.0),
                 ("ptlog dump / babeltrace2 text, integer fields", "ptlog_dump", "bt2_text_fields", 10.0),
                 ("typed: ptlog dump (fields) / babeltrace2 text (fields)", "ptlog_dump_typed", "bt2_text_typed", None),
                 ("typed: ptlog dump --hex / babeltrace2 text (fields)", "ptlog_dump_typed_hex", "bt2_text_typed", None),
                 ("offline_analyzer / babeltrace2 -o dummy, integer fields", "offline_analyzer", "bt2_dummy_fields", 6.0),
                 ("ptlog convert --to jsonl / babeltrace2 text", "ptlog_jsonl", "bt2_text", None),
                 ("C analyzer / bt2 Python analyzer", "analyzer_c", "analyzer_bt2_python", None)]
        out["reading_ratios"] = {}
        for what, fast, slow, bound in pairs:
            rr = ratio(fast, slow)
            if rr is None:
                continue
            out["reading_ratios"][what] = rr
            print("  %-62s %7.1fx%s" % (what, rr, "  (target >= %gx)" % bound if bound else ""))
            if bound:
                target(what, rr, bound, False, ">= %gx" % bound)

    print("\n%-66s %10s  %-10s %s" % ("target (issue 6)", "value", "bound", ""))
    for t in targets:
        v = "n/a" if t["value"] is None else "%.2f" % t["value"]
        m = "n/a" if t["met"] is None else ("met" if t["met"] else "MISSED")
        print("%-66s %10s  %-10s %s" % (t["what"], v, t["target"], m))
    out["targets"] = targets
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


main()
