#!/usr/bin/env python3
"""Run the programs the lowering's mutation test wrote (ACC_MUTATION_DUMP) through acc and
compare with the IR interpreter's output (docs/FUZZING.md, "The interpreter against acc").

    ACC_MUTATION_DUMP=/tmp/mut ACC_MUTATIONS=20000 cargo test --release -p acc-lang --lib mutations
    python3 fuzz/interp_vs_acc.py /tmp/mut [--acc target/release/acc] [--device host]

A mismatch is a lead, not a verdict: the interpreter runs one host device with no data
environment, its own `random`, and gang loops cut its own way, so programs that read
`random`, select emulated devices, fail on data presence, or race between gangs differ for
those reasons. Reported: programs whose output differs, and those acc fails or times out on.
"""
import argparse
import glob
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

# The interpreter's parameters (lang/src/lower/tests.rs, SMALL).
SMALL = dict(n=48, m=16, iter_max=10, bins=8, blocks=2, cols=10, rows=8, generations=3,
             width=16, height=12, max_iter=20, nx=8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--acc", default="target/release/acc")
    ap.add_argument("--device", default="host")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    acc = os.path.abspath(args.acc)
    sets = [x for k, v in SMALL.items() for x in ("--set", f"{k}={v}")]
    scratch = tempfile.mkdtemp(prefix="interp-vs-acc-")

    def one(path):
        want = open(path[:-4] + ".out").read()
        try:
            r = subprocess.run([acc, "--device", args.device, *sets, path], capture_output=True,
                               text=True, timeout=20, cwd=scratch)
        except subprocess.TimeoutExpired:
            return path, "timed out"
        if r.returncode != 0:
            first = next((l for l in r.stderr.splitlines() if l.strip()), "")
            return path, f"exit {r.returncode}: {first.strip()}"
        return (path, "output differs") if r.stdout != want else None

    files = sorted(glob.glob(os.path.join(args.dir, "*.acc")))
    with ThreadPoolExecutor(args.jobs) as ex:
        bad = [x for x in ex.map(one, files) if x]
    for path, why in bad:
        print(f"{path}: {why}")
    print(f"{len(files)} programs, {len(bad)} mismatches")


if __name__ == "__main__":
    main()
