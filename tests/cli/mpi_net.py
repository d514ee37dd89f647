#!/usr/bin/env python3
"""`mpirun -np 1|2|3 mhalearn learn` writes the bytes of one process.

Generates small (10,2,2) and (10,2,3) instances and learns each with small
budgets as one process on 1 thread, one process on 2 threads, and 1, 2 and 3 MPI
ranks on 1 thread each (the sample loops of stages 1–4 and stage 6's tuple
loops shared between them); compares the learned layers and the reports byte for
byte after dropping what records the clock, the machine or the job's layout
(tests/golden/golden.py's normalisation — provenance and "seconds" keys — and
the report's "processes" record). Checks that only rank 0 printed, and that the
"processes" record of a shared run gives every rank a share (as even as the
batches' splits allow), adding up to the same total for 2 and 3 ranks.

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


# How far two ranks' shares may differ: the split of a batch differs by at most one
# stage-1 block of 4096 samples (stage 1 splits whole blocks; these budgets give it one
# batch) and one sample per batch of the other loops (fewer than 100 batches here).
SHARE_SPREAD = 4096 + 100


def shared_samples(name, report_path, ranks, errors):
    """The report's shares of the shared loops' samples, by rank (None for one process): every rank
    drew some, and no two shares differ by more than SHARE_SPREAD."""
    record = json.load(open(report_path)).get("processes")
    if ranks == 1:
        if record is not None:
            errors.append(f"{name}: a one-process report has a processes record")
        return None
    if record is None or record["count"] != ranks:
        errors.append(f"{name}: no processes record of {ranks} ranks: {record}")
        return None
    shares = record["shared_samples_by_process"]
    if len(shares) != ranks or min(shares) <= 0 or max(shares) - min(shares) > SHARE_SPREAD:
        errors.append(f"{name}: shares {shares}")
    print(f"mpi_net: {name}: shared samples by rank {shares}")
    return sum(shares)


def without_processes(normalised):
    value = json.loads(normalised)
    value.pop("processes", None)
    return json.dumps(value, indent=1, sort_keys=True)


def learn_everywhere(tool, mpirun, m, folder, env):
    """Runs the learner on the (10,2,m) instance every way; returns the number of differences."""
    instance = f"i{m}.json"
    run([tool, "generate", "--d", "10", "--k", "2", "--m", str(m), "--scale", "3", "--seed", "2", "-o", instance],
        folder, env)
    learn = [LEARN[0], instance] + LEARN[2:]
    runs = {"1 process, 1 thread": ([tool] + learn + ["--threads", "1"], 1),
            "1 process, 2 threads": ([tool] + learn + ["--threads", "2"], 1)}
    for ranks in (1, 2, 3):
        runs[f"{ranks} MPI rank{'s' if ranks > 1 else ''}, 1 thread each"] = (
            [mpirun, "-np", str(ranks), tool] + learn + ["--threads", "1"], ranks)
    outputs, errors, totals = {}, [], set()
    for i, (name, (argv, ranks)) in enumerate(runs.items()):
        name = f"m = {m}, {name}"
        report, layer = os.path.join(folder, f"r{m}_{i}.json"), os.path.join(folder, f"l{m}_{i}.json")
        stdout = run(argv + ["--report", report, "-o", layer], folder, env)
        headers = stdout.count("mhalearn learn: (d,k,m)")
        if headers != 1:
            errors.append(f"{name}: {headers} ranks printed the header, expected rank 0 alone")
        total = shared_samples(name, report, ranks, errors)
        if total is not None:
            totals.add(total)
        outputs[name] = (without_processes(normalise(report)), normalise(layer))
    first, (report0, layer0) = next(iter(outputs.items()))
    for name, (report, layer) in outputs.items():
        for what, expected, got in (("report", report0, report), ("learned layer", layer0, layer)):
            same = expected == got
            print(f"mpi_net: {what} of {name}: {'same bytes' if same else 'DIFFERS'} as {first}")
            if not same:
                errors.append(f"{what} of {name}, first difference: "
                              f"{first_json_difference(json.loads(expected), json.loads(got))}")
    if len(totals) != 1:
        errors.append(f"m = {m}: the ranks' shares add up to different totals for different rank counts: {totals}")
    nets = [s for s in json.loads(report0)["stages"] if s["stage"] == "6"]
    if not nets or not all(s["tuples_refine"] > 0 for s in nets):
        errors.append(f"m = {m}: the report has no refined stage-6 record")
    for e in errors:
        print("mpi_net: FAILED:", e)
    return len(errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--mpirun", required=True)
    a = ap.parse_args()
    tool = os.path.abspath(a.tool)
    env = dict(os.environ, **MPI_ENV)
    folder = tempfile.mkdtemp(prefix="mhalearn-mpi-")
    try:
        bad = sum(learn_everywhere(tool, a.mpirun, m, folder, env) for m in (2, 3))
        return 1 if bad else 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
