#!/usr/bin/env python3
"""The fast forward pass against PyTorch, side by side in one run.

For each shape (k, d, m) of bench/forward_throughput.cpp, and for R rounds,
this alternates
  - mhalearn's fast path: `mhalearn_bench` filtered to BM_FastForward/(k,d,m)/threads:1
    (65536 uniform Boolean samples, inputs prepared outside the timed loop), and
  - PyTorch float64 on 1 thread (torch.set_num_threads(1), inference mode) on a
    batch of the same size and kind, in every formulation below,
so both see the same machine state; per shape it reports the median of each
over the rounds and the ratio of mhalearn's median to the best torch
formulation's median.

The function is F(X) = Σ_i softmax(X Θ_i Xᵀ) X W_i with full d×d Θ_i, W_i (the
layer of MATH.md §1). torch.nn.MultiheadAttention computes it only for Θ_i of
rank d/H, so the baseline is this function written with torch's batched
kernels, in the formulations a user would try (the fastest is the baseline):
  matmul     X·[Θ_1…Θ_m] and X·[W_1…W_m] as one GEMM each, logits and A·V by
             broadcast batched matmul, heads summed
  einsum     the same contractions written with torch.einsum
  per_head   one bmm chain per head, summed (no concatenated weights)
  bmm_fused  the logits of all heads as one bmm (n, k·m, d)·(n, d, k) and the
             head sum folded into one bmm (n, k, m·k)·(n, m·k, d)
each run on the batch whole and in chunks of 256 and 2048 samples (the whole
batch's intermediates exceed the caches; chunks of 256 were up to 6× faster).
Each formulation is checked against mhalearn.forward on 256 samples (max
relative difference ≤ 1e-12) before it is timed, so every timed torch code
computes the same function.

Usage: forward_vs_torch.py --bench build/release/mhalearn_bench [--rounds R]
                           [--min-time S] [--out docs/bench/forward_vs_torch.json]
Needs PYTHONPATH to hold the mhalearn module (build/release/python) and
/usr/bin/python3's numpy and torch (Debian python3-torch).
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import cpu_model  # noqa: E402
import torch

import mhalearn

SHAPES = [(2, 16, 2), (4, 16, 2), (2, 32, 2), (4, 32, 3), (4, 64, 3)]  # (k, d, m), as the C++ benchmark
BATCH = 65536
CHECK_SAMPLES = 256
CHECK_RELATIVE = 1e-12  # the torch formulations against mhalearn.forward (both double; see test_torch.py)


def weights(inst):
    theta = torch.from_numpy(np.stack([t for t, _ in inst.heads]))  # (m, d, d)
    w = torch.from_numpy(np.stack([w for _, w in inst.heads]))
    return theta, w


def f_matmul(x, theta, w):
    n, k, d = x.shape
    m = theta.shape[0]
    theta_cat = theta.permute(1, 0, 2).reshape(d, m * d)  # [Θ_1 … Θ_m]
    w_cat = w.permute(1, 0, 2).reshape(d, m * d)
    q = (x @ theta_cat).view(n, k, m, d).transpose(1, 2)  # (n, m, k, d)
    v = (x @ w_cat).view(n, k, m, d).transpose(1, 2)
    a = torch.softmax(q @ x.unsqueeze(1).transpose(2, 3), dim=-1)  # (n, m, k, k)
    return (a @ v).sum(dim=1)


def f_einsum(x, theta, w):
    q = torch.einsum("nkd,mde->nmke", x, theta)
    a = torch.softmax(torch.einsum("nmke,nle->nmkl", q, x), dim=-1)
    v = torch.einsum("nld,mde->nmle", x, w)
    return torch.einsum("nmkl,nmle->nke", a, v)


def f_per_head(x, theta, w):
    out = None
    xt = x.transpose(1, 2)
    for i in range(theta.shape[0]):
        a = torch.softmax(torch.bmm(x @ theta[i], xt), dim=-1)
        y = torch.bmm(a, x @ w[i])
        out = y if out is None else out + y
    return out


def f_bmm_fused(x, theta, w):
    n, k, d = x.shape
    m = theta.shape[0]
    theta_cat = theta.permute(1, 0, 2).reshape(d, m * d)
    w_cat = w.permute(1, 0, 2).reshape(d, m * d)
    q = (x @ theta_cat).view(n, k * m, d)  # rows (a, i)
    a = torch.softmax(torch.bmm(q, x.transpose(1, 2)).view(n, k, m, k), dim=-1)  # (n, a, i, b)
    v = (x @ w_cat).view(n, k, m, d).transpose(1, 2).reshape(n, m * k, d)  # rows (i, b)
    return torch.bmm(a.reshape(n, k, m * k), v)


FORMULATIONS = {"matmul": f_matmul, "einsum": f_einsum, "per_head": f_per_head, "bmm_fused": f_bmm_fused}
CHUNKS = [256, 2048, None]  # None: the whole batch in one call


def boolean(n, k, d, seed):
    return np.random.default_rng(seed).choice([-1.0, 1.0], size=(n, k, d))


def check(inst, theta, w, k, d):
    x = boolean(CHECK_SAMPLES, k, d, seed=2)
    expected = mhalearn.forward(inst, x, path="fast")
    for name, f in FORMULATIONS.items():
        with torch.inference_mode():
            got = f(torch.from_numpy(x), theta, w).numpy()
        rel = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
        if not rel <= CHECK_RELATIVE:
            sys.exit(f"torch formulation {name} differs from mhalearn.forward by {rel:.2e} relative at {(k, d)}")


def variant_name(name, chunk):
    return f"{name}/{'whole' if chunk is None else chunk}"


def time_torch(f, chunk, x, theta, w, min_time):
    """Examples/s of f over the batch x, called on chunks of `chunk` samples
    (None: the whole batch at once): repeats until min_time seconds have passed."""
    step = x.shape[0] if chunk is None else chunk
    pieces = [x[s:s + step] for s in range(0, x.shape[0], step)]
    with torch.inference_mode():
        for p in pieces:
            f(p, theta, w)  # warm-up: allocations
        runs, start = 0, time.perf_counter()
        while True:
            for p in pieces:
                f(p, theta, w)
            runs += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                return runs * x.shape[0] / elapsed


def time_fast(bench, shape, min_time):
    k, d, m = shape
    pattern = re.escape(f"BM_FastForward/({k},{d},{m})/threads:1") + "/"
    out = subprocess.run([bench, f"--benchmark_filter=^{pattern}", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    runs = [b for b in json.loads(out)["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if len(runs) != 1:
        sys.exit(f"expected one BM_FastForward run for {shape}, got {len(runs)}")
    return runs[0]["items_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="mhalearn_bench binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per measurement")
    parser.add_argument("--out", default="docs/bench/forward_vs_torch.json")
    args = parser.parse_args()

    torch.set_num_threads(1)
    setup = {}
    for shape in SHAPES:
        k, d, m = shape
        inst = mhalearn.generate(d, k, m, seed=1)
        theta, w = weights(inst)
        check(inst, theta, w, k, d)
        setup[shape] = (torch.from_numpy(boolean(BATCH, k, d, seed=1)), theta, w)

    fast = {s: [] for s in SHAPES}
    torch_rates = {s: {variant_name(n, c): [] for n in FORMULATIONS for c in CHUNKS} for s in SHAPES}
    load_start = os.getloadavg()
    for r in range(args.rounds):
        for shape in SHAPES:
            fast[shape].append(time_fast(args.bench, shape, args.min_time))
            for name, f in FORMULATIONS.items():
                for chunk in CHUNKS:
                    rate = time_torch(f, chunk, *setup[shape], args.min_time)
                    torch_rates[shape][variant_name(name, chunk)].append(rate)
            best = max(torch_rates[shape], key=lambda n: torch_rates[shape][n][-1])
            print(f"round {r + 1}/{args.rounds} {shape}: mhalearn {fast[shape][-1]:.3g} ex/s, "
                  f"torch best {best} {torch_rates[shape][best][-1]:.3g} ex/s", file=sys.stderr)

    rows = []
    for shape in SHAPES:
        medians = {name: statistics.median(v) for name, v in torch_rates[shape].items()}
        best = max(medians, key=medians.get)
        fast_median = statistics.median(fast[shape])
        rows.append({"shape": list(shape), "mhalearn_examples_per_second": fast_median,
                     "mhalearn_runs": fast[shape], "torch_best_formulation": best,
                     "torch_best_examples_per_second": medians[best], "torch_medians": medians,
                     "torch_runs": torch_rates[shape], "ratio": fast_median / medians[best]})
    result = {"command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]), "cpu": cpu_model(platform.processor() or "unknown CPU"),
              "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "load_average_start": load_start, "load_average_end": os.getloadavg(),
              "torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
              "batch": BATCH, "rounds": args.rounds, "min_time": args.min_time, "shapes": rows}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".tmp", "w") as f:
        json.dump(result, f, indent=1)
    os.replace(args.out + ".tmp", args.out)
    for row in rows:
        print(f"{tuple(row['shape'])}: mhalearn {row['mhalearn_examples_per_second']:.3g} ex/s, torch "
              f"{row['torch_best_formulation']} {row['torch_best_examples_per_second']:.3g} ex/s: "
              f"{row['ratio']:.2f}x")


if __name__ == "__main__":
    main()
