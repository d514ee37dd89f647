#!/usr/bin/env python3
"""`mpirun -np 2 mhalearn learn` writes the bytes of one process.

Generates a small (10,2,3) instance, learns it three times with small budgets —
one process on 1 thread, one process on 2 threads, and two MPI ranks on 1
thread each (stage 6's tuple loops shared between them) — and compares the
learned layers and the reports byte for byte after dropping what records the
clock or the machine (tests/golden/golden.py's normalisation: provenance and
"seconds" keys). Also checks that only rank 0 printed.

  mpi_net.py --tool build/release/mhalearn --mpirun /usr/bin/mpiexec
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from golden import first_json_difference, normalise  # noqa: E402

# Small budgets: each learn takes a few seconds; stage 6 runs two rounds.
LEARN = ["learn", "i.json", "--seed", "1", "--rounds", "2", "--stage1-samples", "20000", "--sculpt-samples", "100000",
         "--final-sculpt-samples", "100000",
         "--crude-sculpt-samples", "100000", "--margin-samples", "50000", "--net-tuples", "2000", "--no-reference",
         "--test-samples", "2000"]

# Open MPI on a machine without a network, as root in CI: shared memory between
# the ranks, no single-copy mechanism (it needs ptrace rights containers lack),
# more ranks than cores allowed.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_WAIT_POLICY": "passive"}


def run(argv, folder, env):
    done = subprocess.run(argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=300)
    if done.returncode != 0:
        sys.exit(f"mpi_net: `{' '.join(argv)}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--mpirun", required=True)
    a = ap.parse_args()
    tool = os.path.abspath(a.tool)
    env = dict(os.environ, **MPI_ENV)
    folder = tempfile.mkdtemp(prefix="mhalearn-mpi-")
    try:
        run([tool, "generate", "--d", "10", "--k", "2", "--m", "3", "--scale", "3", "--seed", "2", "-o", "i.json"],
            folder, env)
        runs = {"1 process, 1 thread": [tool] + LEARN + ["--threads", "1"],
                "1 process, 2 threads": [tool] + LEARN + ["--threads", "2"],
                "2 MPI ranks, 1 thread each": [a.mpirun, "-np", "2", tool] + LEARN + ["--threads", "1"]}
        outputs = {}
        for i, (name, argv) in enumerate(runs.items()):
            stdout = run(argv + ["--report", f"r{i}.json", "-o", f"l{i}.json"], folder, env)
            headers = stdout.count("mhalearn learn: (d,k,m)")
            if headers != 1:
                sys.exit(f"mpi_net: {name}: {headers} ranks printed the header, expected rank 0 alone")
            outputs[name] = (normalise(os.path.join(folder, f"r{i}.json")), normalise(os.path.join(folder, f"l{i}.json")))
        first, (report0, layer0) = next(iter(outputs.items()))
        bad = 0
        for name, (report, layer) in outputs.items():
            for what, expected, got in (("report", report0, report), ("learned layer", layer0, layer)):
                same = expected == got
                print(f"mpi_net: {what} of {name}: {'same bytes' if same else 'DIFFERS'} as {first}")
                if not same:
                    print("  first difference:", first_json_difference(json.loads(expected), json.loads(got)))
                    bad += 1
        nets = [s for s in json.loads(report0)["stages"] if s["stage"] == "6"]
        if not nets or not all(s["tuples_refine"] > 0 and s["refinement"] == "head by head" for s in nets):
            sys.exit("mpi_net: the report has no stage-6 record refined head by head")
        return 1 if bad else 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
