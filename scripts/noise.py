#!/usr/bin/env python3
"""Labels as users have them: the runs of docs/noise.md, then the page and its figures.

At (16,2,2), logit scale 6, instance seed 1, one run at a time under `nice -n 10`:
  1. `mhalearn learn` on labels with Gaussian noise of relative size ε = 0, 1e-12 … 1e-2
     (`--label-noise`; certification assumes the same level);
  2. float32 labels: 6·10⁶ samples (`mhalearn sample`), the labels cast to float32 with
     numpy, learned from `--x/--y` three times (the paper's layer `--no-polish`, the
     polished one `--final-fit-samples 0`, the final one), each layer then evaluated
     on 20000 fresh test inputs with `mhalearn forward`;
  3. the final fit's error against its samples N at ε = 1e-4 (`--final-fit-samples N`).
Every learn goes through scripts/experiments.py into docs/bench/noise/ (NAME.log with
the command first, NAME.report.json, NAME.learned.json); scripts/noise_table.py then
writes docs/noise.md and docs/data/noise_*.tsv, and gnuplot docs/figures/noise_*.svg.

  /usr/bin/python3 scripts/noise.py [--tool build/release/mhalearn] [--reuse]

--reuse reads back every run whose report exists and whose logged command is the
run's. The runs committed in docs/bench/noise/ were made at 4a269a8 by this
script's shell predecessor (the same commands), whose logs do not start with the
command: the runner does not recognise them, and the script makes them again.
The page alone, from the committed runs: `--page-only` (it remakes the test arrays,
which .gitignore keeps out of git, with `sample` and `forward`, about a second).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Run, draw, driver_arguments, generate, load, run  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = "docs/bench/noise"
INSTANCE = f"{OUT}/instance.json"
NOISE_LEVELS = ["0", "1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "1e-2"]
FINAL_FIT_SAMPLES = [2048, 8192, 32768, 131072, 524288]
FLOAT32_LAYERS = {"paper": ["--no-polish"], "polished": ["--final-fit-samples", "0"], "final": []}


def learn(tool, name, inputs, extra, learned=True):
    """`nice -n 10 mhalearn learn INPUTS --seed 1 --threads 2 EXTRA --report ... [-o ...]`."""
    argv = ["nice", "-n", "10", tool, "learn", *inputs, "--seed", "1", "--threads", "2", *extra,
            "--report", f"{OUT}/{name}.report.json"] + (["-o", f"{OUT}/{name}.learned.json"] if learned else [])
    return Run(name, argv, OUT, report=f"{OUT}/{name}.report.json", tool=tool, cwd=ROOT)


def tool_call(tool, *args):
    subprocess.run(["nice", "-n", "10", tool, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def noise_runs(tool):
    return [learn(tool, f"noise_{eps}", [INSTANCE], ["--label-noise", eps]) for eps in NOISE_LEVELS]


def final_fit_runs(tool):
    return [learn(tool, f"sqrt_n_{n}", [INSTANCE], ["--label-noise", "1e-4", "--final-fit-samples", str(n)],
                  learned=False) for n in FINAL_FIT_SAMPLES]


def float32_runs(tool):
    data = ["--x", f"{OUT}/X.npy", "--y", f"{OUT}/Y32.npy", "--m", "2"]
    return [learn(tool, f"float32_{name}", data, extra) for name, extra in FLOAT32_LAYERS.items()]


def float32_dataset(tool):
    """6·10⁶ labelled samples with their labels cast to float32 (X.npy, Y32.npy; 1.5 GB, removed after)."""
    import numpy as np
    tool_call(tool, "sample", INSTANCE, "--n", "6000000", "--seed", "1", "--threads", "2",
              "--x", f"{OUT}/X.npy", "--y", f"{OUT}/Y.npy")
    y = os.path.join(ROOT, OUT, "Y.npy")
    np.save(os.path.join(ROOT, OUT, "Y32.npy"), np.load(y).astype(np.float32))
    os.remove(y)


def test_arrays(tool):
    """20000 fresh test inputs and each float32 layer's outputs on them (the page compares them)."""
    tool_call(tool, "sample", INSTANCE, "--n", "20000", "--seed", "1000",
              "--x", f"{OUT}/test_X.npy", "--y", f"{OUT}/test_Y.npy")
    for name in FLOAT32_LAYERS:
        tool_call(tool, "forward", f"{OUT}/float32_{name}.learned.json", "--x", f"{OUT}/test_X.npy",
                  "-o", f"{OUT}/float32_{name}.test_Y.npy")


def run_float32(tool, reuse):
    specs = float32_runs(tool)
    pending = [s for s in specs if not (reuse and run(s, reuse=True, quiet=True).reused)]
    if pending:
        float32_dataset(tool)
        try:
            results = [run(s) for s in pending]
        finally:
            for name in ("X.npy", "Y32.npy"):
                path = os.path.join(ROOT, OUT, name)
                if os.path.exists(path):
                    os.remove(path)
        return results
    return []


FIGURES = r'''set terminal svg size 760,460 font "sans,12"
set output "docs/figures/noise_errors.svg"
set logscale xy
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "relative label noise ε (rms of the noise / rms of the labels)"
set ylabel "max relative error of Θ_i and W_i"
set key top left
set title "(16,2,2), logit scale 6: errors against label noise (ε = 0 drawn at 10^{-16})"
plot "docs/data/noise_errors.tsv" using 2:3 skip 1 with linespoints pt 7 title "paper's stages", \
     "" using 2:4 skip 1 with linespoints pt 5 title "polished (512 samples)", \
     "" using 2:5 skip 1 with linespoints pt 9 lw 2 title "final fit", \
     "docs/data/noise_float32.tsv" using 2:3 skip 1 with points pt 6 ps 1.6 title "float32 labels: paper's stages", \
     "" using 2:4 skip 1 with points pt 4 ps 1.6 title "float32: polished", \
     "" using 2:5 skip 1 with points pt 8 ps 1.6 title "float32: final fit"
set output "docs/figures/noise_sqrt_n.svg"
set xlabel "training samples N of the final fit"
set format x "2^{%L}"
set logscale x 2
set title "(16,2,2), label noise 10^{-4}: the final fit's error against N"
plot "docs/data/noise_sqrt_n.tsv" using 1:2 skip 1 with linespoints pt 7 lw 2 title "max Θ, W error", \
     "" using 1:3 skip 1 with lines dt 2 title "fitted c/√N"
'''


def machine_and_commit(report_path):
    """The CPU and commit the page names: those of its runs, from a report's provenance."""
    provenance = load(os.path.join(ROOT, report_path))["provenance"]
    return provenance["build"]["cpu"], provenance["git_commit"][:7]


def main():
    parser = driver_arguments(__doc__)
    parser.add_argument("--page-only", action="store_true",
                        help="no learn: the test arrays (sample, forward), the page, its data and figures from the runs")
    a = parser.parse_args()
    results = []
    if not a.page_only:
        generate(a.tool, INSTANCE, 16, 2, 2, 6, 1, cwd=ROOT)
        results = [run(s, reuse=a.reuse) for s in noise_runs(a.tool)]
        results += run_float32(a.tool, a.reuse)
        results += [run(s, reuse=a.reuse) for s in final_fit_runs(a.tool)]
    test_arrays(a.tool)
    subprocess.run([sys.executable, "scripts/noise_table.py", OUT, *machine_and_commit(f"{OUT}/noise_0.report.json")],
                   cwd=ROOT, check=True)
    draw(FIGURES, ROOT)
    failed = [r.name for r in results if r.failed]
    print("wrote docs/noise.md, docs/data/noise_*.tsv, docs/figures/noise_*.svg" +
          (f"; failed: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
