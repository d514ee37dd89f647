#!/usr/bin/env python3
"""Writes docs/benchmarks.md from the Google Benchmark JSON of mhalearn_bench
and the side-by-side PyTorch run of scripts/forward_vs_torch.py.

Usage: forward_table.py docs/bench/forward.json [--torch docs/bench/forward_vs_torch.json]
                        [--provenance docs/bench/forward.provenance.json]
                        [--command CMD] [--bench-command CMD] [--out docs/benchmarks.md]
The machine, commit and build lines, and each row's learner, come from the benchmark's data:
Google Benchmark's JSON context (date, CPUs, clock, caches, load) and the provenance record
scripts/bench-forward.sh writes beside it when it runs (`experiments.py provenance`: the CPU
model, the checkout's commit, the build's version and fingerprint) — never from the host that
writes the page.
Standard library only.
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import NOT_RECORDED, Learners, provenance_label, table  # noqa: E402

TARGET_SPEEDUP = 3.0


def load_torch(path):
    """{(k,d,m): row} of the side-by-side run (scripts/forward_vs_torch.py), and the run's header."""
    if not path or not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        data = json.load(f)
    return {tuple(r["shape"]): r for r in data["shapes"]}, data

FAST_RE = re.compile(r"^BM_FastForward/\((\d+),(\d+),(\d+)\)/threads:(\d+)")
REF_RE = re.compile(r"^BM_ReferenceForward/\((\d+),(\d+),(\d+)\)")


def useful_flops(k, d, m):
    return m * (4 * k * d * d + 4 * k * k * d)


def machine(context, provenance):
    """The benchmark run's machine: the CPU model its provenance record names, the CPUs, clock and L2
    cache its JSON context gives."""
    text = f"{provenance.get('machine', 'CPU not recorded')}, {context.get('num_cpus', '?')} cores"
    if context.get("mhz_per_cpu"):
        text += f", {context['mhz_per_cpu']} MHz nominal"
    l2 = [c for c in context.get("caches", []) if c.get("level") == 2]
    if l2:
        text += f", L2 {l2[0]['size'] // 1024} KiB per core"
    return text


def run_provenance(path, json_path):
    """The provenance record of the benchmark's JSON file (by its file name), {} when none was recorded."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get(os.path.basename(json_path), {})


def commit_line(provenance):
    if not provenance:
        return "not recorded (no provenance record beside the benchmark's JSON)"
    text = provenance.get("commit", "not recorded")
    fingerprint = provenance_label(provenance)
    return text + (f"; build fingerprint `{fingerprint}`" if not fingerprint.startswith("commit") and
                   fingerprint != NOT_RECORDED else "")


def load(path):
    """Returns {benchmark run name: {field: value}}, preferring median aggregates
    when the run used --benchmark_repetitions, else the mean of the iterations."""
    with open(path) as f:
        data = json.load(f)
    iterations, medians, cvs = defaultdict(list), {}, {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b
            elif b.get("aggregate_name") == "cv":
                cvs[name] = b
        elif not b.get("error_occurred"):
            iterations[name].append(b)
    results = {}
    for name, runs in iterations.items():
        if name in medians:
            results[name] = medians[name]
        else:
            keys = ("items_per_second", "GFLOPs")
            results[name] = {key: sum(r.get(key, 0.0) for r in runs) / len(runs) for key in keys}
    return data.get("context", {}), results, cvs


def spread_note(cvs):
    """One sentence on the run-to-run spread, from the coefficient-of-variation aggregates."""
    fast = [b.get("items_per_second", 0.0) for name, b in cvs.items() if FAST_RE.match(name)]
    gemm = [b.get("GFLOPs", 0.0) for name, b in cvs.items() if name.startswith("BM_GemmPeak")]
    if not fast:
        return ""
    note = f" Coefficient of variation across repetitions: up to {100 * max(fast):.0f} % for the fast path"
    if gemm:
        note += f", {100 * gemm[0]:.0f} % for the GEMM peak"
    return note + "; absolute rates on this shared virtual machine also drift between runs."


def fmt_rate(x):
    return "–" if x is None else f"{x:.3g}".replace("e+0", "e").replace("e+", "e")


def rebased_links(text, folder="bench"):
    """An included page's relative links, rewritten to resolve from docs/ (the page is in docs/FOLDER/)."""
    def rebase(m):
        target = m.group(2)
        if re.match(r"[a-z]+:|#|/", target):
            return m.group(0)
        return m.group(1) + os.path.normpath(os.path.join(folder, target)) + ")"
    return re.sub(r"(\]\()([^)\s]+)\)", rebase, text)


def included_section(title, name):
    """A section kept in its own file under docs/bench/ by the script that measures it."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs/bench", name)
    if not os.path.exists(path):
        return []
    text = rebased_links(open(path).read().rstrip())
    # Its learner notes speak of its own page: say which, where they stand in this one.
    text = text.replace("This page's learner is", f"[bench/{name}](bench/{name})'s learner is")
    return [f"## {title}", "", text, ""]


def torch_section(torch_rows, header, learners, label):
    """The side-by-side table: mhalearn's fast path and PyTorch in one run, interleaved."""
    if not torch_rows:
        return ["## Against PyTorch", "", "Not measured: run `scripts/bench-forward.sh` (it needs python3-torch).", ""]
    lines = [
        "## Against PyTorch, side by side",
        "",
        f"Produced by `{header['command']}` (raw results: `docs/bench/forward_vs_torch.json`), "
        f"run by `scripts/bench-forward.sh`: {header['rounds']} rounds; in each round, for each shape, "
        f"mhalearn's fast path (`mhalearn_bench`, 1 thread) and then every PyTorch formulation "
        f"(float64, `torch.set_num_threads(1)`, OpenBLAS with 1 thread, inference mode) on {header['batch']} "
        "uniform Boolean samples, each timed for "
        f"{header['min_time']} s; the table gives the medians over the rounds. Machine: {header['cpu']}, "
        f"{header['cores']} cores; PyTorch {header['torch_version']}; {header['date']}; load average "
        f"{', '.join(f'{x:.2f}' for x in header['load_average_start'])} at the start, "
        f"{', '.join(f'{x:.2f}' for x in header['load_average_end'])} at the end.",
        "",
        "PyTorch has no kernel for this layer (`nn.MultiheadAttention` computes it only for Θ_i of rank d/H), "
        "so the baseline is the layer written with torch's batched kernels in four formulations — "
        "`matmul` (concatenated [Θ_1…Θ_m] and [W_1…W_m], broadcast batched matmul), `einsum`, "
        "`per_head` (one bmm chain per head) and `bmm_fused` (all heads' logits in one bmm, the head sum "
        "folded into another) — each on the whole batch and in chunks of 256 and 2048 samples, each "
        "checked against `mhalearn.forward` to 1e−12 before it is timed; the fastest (formulation, chunk) "
        "per shape is the baseline. The last four columns give each formulation's best chunk.",
        "",
    ]
    cells = []
    for shape in sorted(torch_rows, key=lambda s: useful_flops(*s)):
        r = torch_rows[shape]
        med = {}
        for variant, rate in r["torch_medians"].items():
            name = variant.split("/")[0]
            med[name] = max(med.get(name, 0.0), rate)
        cells.append([f"({','.join(map(str, shape))})", fmt_rate(r["mhalearn_examples_per_second"]),
                      fmt_rate(r["torch_best_examples_per_second"]), r["torch_best_formulation"], f"{r['ratio']:.2f}×",
                      "yes" if r["ratio"] >= TARGET_SPEEDUP else "**no**"] +
                     [fmt_rate(med.get(n)) for n in ("matmul", "einsum", "per_head", "bmm_fused")] +
                     [learners.label_cell(label)])
    lines += table(["shape (k,d,m)", "mhalearn fast ex/s", "PyTorch best ex/s", "best formulation", "mhalearn ÷ PyTorch",
                    f"≥ {TARGET_SPEEDUP:g}×?", "PyTorch matmul", "PyTorch einsum", "PyTorch per_head",
                    "PyTorch bmm_fused", "learner"], cells, "lrrlrrrrrrl")
    lines += ["", learners.note([label]), ""]
    return lines


def arithmetic_section():
    """The reproducible build's speed cost (scripts/bench-arithmetic.sh), when it has been measured."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs/bench/arithmetic.md")
    if not os.path.exists(path):
        return []
    return ["## The speed cost of the reproducible build", "", rebased_links(open(path).read().rstrip()), ""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_path")
    parser.add_argument("--command", default="scripts/bench-forward.sh")
    parser.add_argument("--bench-command", default="")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--torch", default="docs/bench/forward_vs_torch.json")
    parser.add_argument("--provenance", default="docs/bench/forward.provenance.json",
                        help="the runs' provenance records (by JSON file name), written by scripts/bench-forward.sh")
    args = parser.parse_args()
    torch_rows, torch_header = load_torch(args.torch)
    provenance = run_provenance(args.provenance, args.json_path)
    torch_label = provenance_label(run_provenance(args.provenance, args.torch)) if torch_rows else None
    bench_label = provenance_label(provenance)
    learners = Learners(labels=[bench_label] + ([torch_label] if torch_label else []))

    context, results, cvs = load(args.json_path)
    fast, ref = defaultdict(dict), {}
    gemm_peak = None
    for name, r in results.items():
        if m := FAST_RE.match(name):
            k, d, mh, threads = map(int, m.groups())
            fast[(k, d, mh)][threads] = r
        elif m := REF_RE.match(name):
            ref[tuple(map(int, m.groups()))] = r
        elif name.startswith("BM_GemmPeak"):
            gemm_peak = r.get("GFLOPs")
    if not fast:
        sys.exit(f"{args.json_path}: no BM_FastForward results")

    shapes = sorted(fast, key=lambda s: useful_flops(*s))
    rows, verdicts = [], []
    for shape in shapes:
        one, two = fast[shape].get(1), fast[shape].get(2)
        ex1 = one["items_per_second"] if one else None
        ex2 = two["items_per_second"] if two else None
        gflops1 = one.get("GFLOPs") if one else None
        peak_frac = f"{100 * gflops1 / gemm_peak:.1f} %" if gflops1 and gemm_peak else "–"
        base = torch_rows[shape]["torch_best_examples_per_second"] if shape in torch_rows else None
        speedup = torch_rows[shape]["ratio"] if shape in torch_rows else None
        meets = "–" if speedup is None else ("yes" if speedup >= TARGET_SPEEDUP else "**no**")
        if speedup is not None:
            verdicts.append(f"({','.join(map(str, shape))}) {speedup:.1f}× {'✓' if speedup >= TARGET_SPEEDUP else '✗'}")
        ref_ex = ref[shape]["items_per_second"] if shape in ref else None
        ratio = f"{ex1 / ref_ex:,.0f}×" if ex1 and ref_ex else "–"
        rows.append([
            "(" + ",".join(map(str, shape)) + ")",
            f"{useful_flops(*shape):,}",
            fmt_rate(ex1),
            fmt_rate(ex2),
            "–" if gflops1 is None else f"{gflops1:.2f}",
            peak_frac,
            fmt_rate(base),
            "–" if speedup is None else f"{speedup:.2f}×",
            meets,
            fmt_rate(ref_ex),
            ratio,
            learners.label_cell(bench_label),
        ])

    header = ["shape (k,d,m)", "useful FLOPs / example", "fast ex/s, 1 thread", "fast ex/s, 2 threads",
              "GFLOP/s, 1 thread", "of 1-core GEMM peak", "PyTorch ex/s (1 thread, same run)",
              "mhalearn ÷ PyTorch (same run)", f"≥ {TARGET_SPEEDUP:g}×?", "reference ex/s (MPFR 200 bits)",
              "fast / reference", "learner"]
    borderline = [r[0] for r, s in zip(rows, shapes)
                  if s in torch_rows and abs(float(r[7].rstrip("×")) / TARGET_SPEEDUP - 1) < 0.10]
    chunk_bits = defaultdict(list)
    for shape in shapes:
        label = fast[shape].get(1, {}).get("label", "")
        if label.startswith("chunk_bits="):
            chunk_bits[label.split("=")[1]].append("(" + ",".join(map(str, shape)) + ")")
    met = [r[0] for r, s in zip(rows, shapes) if r[8] == "yes"]
    short = [r[0] for r, s in zip(rows, shapes) if r[8] == "**no**"]
    if not short:
        verdict = "Met for every shape."
    elif not met:
        verdict = "Not met for any shape."
    else:
        verdict = f"Met for {', '.join(met)}; not met for {', '.join(short)}."
    if borderline:
        verdict += (f" {', '.join(borderline)} {'is' if len(borderline) == 1 else 'are'} within 10 % of the "
                    "target; run-to-run drift on this machine is of that order, so the verdict there can flip between runs.")

    lines = [
        "# Forward-pass throughput",
        "",
        "Produced by:",
        "",
        "```sh",
        args.command,
        "```",
        "",
    ]
    if args.bench_command:
        lines += [f"which ran `{args.bench_command}` (raw results: `{args.json_path}`).", ""]
    lines += [
        f"- Machine: {machine(context, provenance)}",
        f"- Date: {context.get('date', 'unknown')}",
        f"- Git commit: {commit_line(provenance)}",
        f"- Load average when the run started: "
        f"{', '.join(f'{x:.2f}' for x in context.get('load_avg', [])) or 'unknown'}",
        "- Build: mhalearn release preset (`-O3`, reproducible arithmetic: `-march=x86-64-v3 -ffp-contract=off`, "
        "fixed Eigen blocking; the native build's speed is in the last section); Google Benchmark from Debian (it reports "
        f"library build type '{context.get('library_build_type', '?')}', which concerns the harness only)",
        f"- Measured 1-core double GEMM peak (Eigen, 512×512×512): "
        f"{'–' if gemm_peak is None else f'{gemm_peak:.1f}'} GFLOP/s",
        "",
        f"Target: at least {TARGET_SPEEDUP:g}× PyTorch's examples/s (its fastest float64 formulation, measured "
        f"side by side in the same run: next section), per example, on 1 thread. "
        + (f"{verdict} Ratio per shape: {'; '.join(verdicts)}." if verdicts else "PyTorch was not measured."),
        "",
    ]
    lines += table(header, rows, "l" + "r" * (len(header) - 2) + "l")
    lines += [
        "",
        learners.note([bench_label]),
        "",
        "Useful FLOPs per example are those of the dense formulation, m·(4kd² + 4k²d): "
        "XΘ_i (2kd²), the logits (XΘ_i)Xᵀ (2k²d), A_i·X (2k²d) and (A_iX)W_i (2kd²). "
        "GFLOP/s is that count times examples/s, so it is an *effective* rate: the fast path "
        "does fewer arithmetic operations than the dense formulation. "
        "Fast-path batches hold 65536 uniform Boolean samples (inputs drawn outside the timed loop); "
        "the reference path runs 64 samples per iteration. "
        "With repetitions, each number is the median over the repetitions." + spread_note(cvs),
        "",
        "The fast-path columns of this table come from the full benchmark run above; the ratio column "
        "comes from the side-by-side run below, whose mhalearn numbers were measured interleaved with PyTorch's.",
        "",
        *torch_section(torch_rows, torch_header, learners, torch_label),
        *arithmetic_section(),
        "## How the fast path works",
        "",
        "- Boolean tokens are bit-packed (one bit per coordinate, set = +1).",
        "- x·[Θ_1 … Θ_m | W_1 … W_m] for a ±1 token is a signed sum of rows. The rows are grouped in chunks of "
        "8 (or 4, when the 8-bit tables would not fit in L2) bits, and for each chunk a table holds the "
        "signed sums for all 2^bits sign patterns, so one token costs d/bits vector additions of width 2md "
        "instead of d multiply-adds per output"
        + (" (chunk bits here: " + "; ".join(f"{b} for {', '.join(v)}" for b, v in sorted(chunk_bits.items(), reverse=True)) + ")"
           if chunk_bits else "") + ".",
        "- The logits, softmax and attention-weighted sums of the W-projections are computed per sample in "
        "double precision with a fixed summation order (fixed four-accumulator dot products).",
        "- Each sample is computed alone, so results are bit-identical for any thread count (test: `tests/model/test_forward.cpp`, "
        "\"fast forward is bit-identical for any thread count and batch split\", 1 and 2 threads); threads "
        "(OpenMP, static schedule) split the batch.",
        "",
        "The reference path is the MPFR implementation used for correctness checks "
        "(`forward_mpfr_batch`, 200 bits), shown for scale only.",
        "",
        *included_section("Polishing", "polish.md"),
        *included_section("Stage 6 for more heads", "net.md"),
        "## Datasets bigger than memory",
        "",
        "Peak RSS and throughput of `sample` writing 10⁸ samples at (16,2,2) (28.8 GB of",
        "files), of `stage1` reading all of them and of `learn` reading most, each next",
        "to the bound on peak RSS that holds whatever the number of samples, with the",
        "formula, its derivation and the commands:",
        "[bench/streaming.md](bench/streaming.md).",
        "",
    ]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
