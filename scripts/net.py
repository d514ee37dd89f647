#!/usr/bin/env python3
"""Stage 6 for more heads: the runs of docs/bench/net.md, then the page.

`mhalearn learn` with default options and --no-reference on (16,2,m), logit
scale 3, instance seed 1, for m = 3, 4, 5 on 2 threads under `nice -n 10`, one
run at a time; the paper's stages alone at m = 5 (--no-polish); stage 6 alone on
the true hull at m = 4 and 5 (--oracle hull --no-polish); with --mpi, the m = 4
run again as `mpirun -np 2` with 1 thread per rank. Each run goes through
scripts/experiments.py into docs/bench/net/ (NAME.log: the command first;
NAME.report.json; the learned layer), with its /usr/bin/time figures (wall,
user, system seconds, then the load average before / after) in NAME.time;
scripts/net_table.py writes docs/bench/net.md from them (the page alone:
`python3 scripts/net_table.py docs/bench/net > docs/bench/net.md`).

  python3 scripts/net.py [--tool build/release/mhalearn] [--mpi] [--reuse]

--reuse reads back every run whose report exists and whose logged command is
the run's (scripts/README.md). The runs committed in docs/bench/net/ were made
before OMP_WAIT_POLICY=passive was set for every run (their logs say which had
it), so without it the m = 3 and m = 4 runs would differ only in that variable.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Run, driver_arguments, generate, run, write_page  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = "docs/bench/net"
# On a shared machine an idle OpenMP thread that spins at a barrier holds a core
# the busy thread of the same loop is waiting for (perf: 86% of a (16,2,5)
# polishing run's samples in libgomp's wait loop at load 12); passive waiting
# sleeps instead. It does not change any result.
PASSIVE = {"OMP_WAIT_POLICY": "passive"}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def instance(m):
    return f"{OUT}/d16_k2_m{m}_scale3_seed1.instance.json"


def learn_run(tool, name, m, extra=(), threads=2, learned=True, launcher=()):
    """One timed learn: /usr/bin/time around `nice -n 10 [launcher] mhalearn learn ...`; the
    log shows the command without the timing wrapper (and with OMP_WAIT_POLICY=passive)."""
    command = ["nice", "-n", "10", *launcher, tool, "learn", instance(m), "--seed", "1", "--threads", str(threads),
               "--no-reference", *extra, "--report", f"{OUT}/{name}.report.json"]
    if learned:
        command += ["-o", f"{OUT}/{name}.learned.json"]
    timed = ["/usr/bin/time", "-f", "%e %U %S", "-o", f"{OUT}/{name}.time"] + command
    shown = " ".join([f"{k}={v}" for k, v in PASSIVE.items()] + command)
    env = dict(PASSIVE, **(MPI_ENV if launcher else {}))
    return Run(name, timed, OUT, report=f"{OUT}/{name}.report.json", tool=tool, env=env, cwd=ROOT, shown=shown)


def runs(tool, mpi):
    specs = [learn_run(tool, f"d16_k2_m{m}_scale3_seed1", m) for m in (3, 4, 5)]
    specs.append(learn_run(tool, "d16_k2_m5_scale3_seed1_no_polish", 5, ["--no-polish"]))
    for m in (4, 5):
        specs.append(learn_run(tool, f"d16_k2_m{m}_scale3_seed1_oracle_hull", m, ["--no-polish", "--oracle", "hull"],
                               learned=False))
    if mpi:
        specs.append(learn_run(tool, "d16_k2_m4_scale3_seed1_mpi2", 4, threads=1, launcher=("mpirun", "-np", "2")))
    return specs


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def timed_run(spec, reuse):
    """The run, with the load average before and after appended to its .time file when made now."""
    before = load_average()
    result = run(spec, reuse=reuse)
    if not result.reused:
        with open(os.path.join(ROOT, OUT, spec.name + ".time"), "a") as f:
            f.write(f"load {before} / {load_average()}\n")
    return result


def main():
    parser = driver_arguments(__doc__)
    parser.add_argument("--mpi", action="store_true", help="the m = 4 run again under mpirun -np 2")
    a = parser.parse_args()
    for m in (3, 4, 5):
        generate(a.tool, instance(m), 16, 2, m, 3, 1, cwd=ROOT)
    failed = [r.name for r in (timed_run(s, a.reuse) for s in runs(a.tool, a.mpi)) if r.failed]
    page = subprocess.run([sys.executable, "scripts/net_table.py", OUT], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    write_page(os.path.join(ROOT, "docs/bench/net.md"), page.stdout)
    print("wrote docs/bench/net.md" + (f"; failed: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
