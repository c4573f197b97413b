#!/usr/bin/env python3
"""alternate.py RUNS 'COMMAND A' 'COMMAND B' [...]: the commands run one after the other, RUNS rounds
(A, B, A, B, ...), so that a guest whose speed drifts slows all of them alike; prints each command's
median wall time and median CPU time (user + system of the command and its children) and its speed
against the first. Output goes to /dev/null; a command that fails stops the comparison.

    bench/alternate.py 9 'OLD/ptlog convert F.jsonl --to ptl -o a.ptl' 'NEW/ptlog convert F.jsonl --to ptl -o b.ptl'
"""
import resource
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    runs, commands = int(sys.argv[1]), sys.argv[2:]
    wall = {c: [] for c in commands}
    cpu = {c: [] for c in commands}
    for _ in range(runs):
        for c in commands:
            before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run(c, shell=True, stdout=subprocess.DEVNULL, check=True)
            end, after = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[c].append(end - start)
            cpu[c].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    first = statistics.median(wall[commands[0]])
    for c in commands:
        w, u = statistics.median(wall[c]), statistics.median(cpu[c])
        print(f"{w * 1000:9.1f} ms wall {u * 1000:9.1f} ms CPU  x{first / w:5.2f}  {c}")


if __name__ == "__main__":
    main()
