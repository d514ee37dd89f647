#!/usr/bin/env python3
"""Writes docs/bench/memory.md: the learner's memory at large d, from one run of
scripts/bench-memory.sh — the body's least-squares centre against d for both
methods (bench/centre_scale.cpp), the default learner end to end at (64,2,2)
with its resident set sampled over time, the earlier measurement it replaces,
and what d = 128 and d = 256 would take, projected from the measured scaling.

Usage: memory_table.py DIR [--out PAGE]
  DIR holds centre.json (Google Benchmark JSON), run.json (commands, machine,
  commit, load) and, for the learn, d64_k2_m2_scale6_seed1.{time,report.json,rss,log}.
Standard library only.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Learners, error, fmt, learner_label, page_main, table  # noqa: E402

RUN = "d64_k2_m2_scale6_seed1"
TARGET_BYTES = 1e9  # issue target: peak resident set at (64,2,2)
# The measurement the streamed centre replaces (dense centre, Z and KZ of the
# polishing preconditioner whole): committed with docs/targets.md.
EARLIER = "docs/targets/d64_k2_m2_scale6_seed1"
MAX_SLABS = 2 ** 14  # learn/options.cpp, kMaxExtendedSlabs
MIN_SLABS_PER_UNKNOWN = 2  # learn/options.cpp, kMinExtendedSlabsPerUnknown
GB = 1e9


def secs(x):
    """Seconds as a reader compares them: 527, 45.3, 0.035."""
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def centre_rows(bench):
    """{(method, d): counters} of the BM_Centre entries."""
    out = {}
    for e in bench["benchmarks"]:
        name = e.get("run_name", e["name"])
        if not name.startswith("BM_Centre/"):
            continue
        _, method, d = name.split("/")[:3]
        out[(method, int(d.split(":")[1]))] = e
    return out


def read_time(path):
    """/usr/bin/time -f '%e %U %S %M': wall, user, system seconds, peak resident set (bytes).
    The figures are the file's last line (GNU time writes how a failed command ended before it)."""
    wall, user, system, kb = open(path).read().splitlines()[-1].split()[:4]
    return float(wall), float(user), float(system), int(kb) * 1024


# The (128,2,2) attempts: the folder of each one's segment files, and its build.
D128_ATTEMPTS = [("d128", "The first attempt, the build of fafbbb5"),
                 ("d128_eb71897", "The second attempt, the build of eb71897; segment 6 (polishing) by 1173ee4 "
                                  "with `--resume-other-build`")]


def segment_rows(folder):
    """One attempt's finished segments (segmentK.{command,time}, copied from the run's
    directory by hand): each one's start, end, wall, CPU and peak, and their sums."""
    numbers = sorted(int(f[len("segment"):-len(".time")]) for f in os.listdir(folder)
                     if f.startswith("segment") and f.endswith(".time")) if os.path.isdir(folder) else []
    if not numbers:
        return []
    rows, wall_sum, cpu_sum, peak_max = [], 0.0, 0.0, 0
    for k in numbers:
        time_file = os.path.join(folder, f"segment{k}.time")
        lines = open(time_file).read().splitlines()
        ended = lines[0].replace("Command ", "") if len(lines) > 1 else "exited with status 0"
        wall, user, system, peak = read_time(time_file)
        command = open(os.path.join(folder, f"segment{k}.command")).read()
        start = "resumed" if "--resume" in command else "from the start"
        rows.append([str(k), start, ended, secs(wall), secs(user + system), f"{peak / GB:.2f}"])
        wall_sum, cpu_sum, peak_max = wall_sum + wall, cpu_sum + user + system, max(peak_max, peak)
    rows.append(["all", "", "", secs(wall_sum), secs(cpu_sum), f"{peak_max / GB:.2f}"])
    return rows


def segments_section(directory):
    """A table of finished segments per (128,2,2) attempt that has any."""
    text = []
    for name, attempt in D128_ATTEMPTS:
        rows = segment_rows(os.path.join(directory, name))
        if rows:
            text += [f"{attempt} (`docs/bench/memory/{name}/`):", ""] + \
                table(["segment", "start", "end", "wall (s)", "CPU (s)", "peak RSS (GB)"], rows, align="rllrrr") + [""]
    if not text:
        return []
    return ["## (128,2,2), segment by segment", "",
            "The finished segments of `scripts/run-d128.sh` whose files are in the repository "
            "(GNU time: wall, user + system CPU, peak resident set, its KiB as GB = 10⁹ bytes; exit status 5 is a "
            "SIGTERM at a safe point, signal 9 a SIGKILL, signal 15 a second SIGTERM, which stops at once). A segment still running, or stopped before it did anything worth keeping, is not here; "
            "what each segment did is under \"What the attempts say\".", ""] + text[:-1]


def d128_end_to_end_section(directory):
    """The finished (128,2,2) runs: an attempt folder with its report.json."""
    text = []
    for name, attempt in D128_ATTEMPTS:
        path = os.path.join(directory, name, "report.json")
        if not os.path.exists(path):
            continue
        report = json.load(open(path))
        builds = [f"{b['git_commit']} (until {b['until']})" for b in report["provenance"].get("earlier_builds", [])]
        by_stage = {}  # stage: [records, seconds], in the order of the run
        for s in report["stages"]:
            entry = by_stage.setdefault(str(s["stage"]), [0, 0.0])
            entry[0] += 1
            entry[1] += s["seconds"]
        rows = [["polishing" if k == "polish" else f"stage {k}", str(n), secs(t)] for k, (n, t) in by_stage.items()]
        rows.append(["all (the report's `seconds`)", str(len(report["stages"])), secs(report["seconds"])])
        text += [f"{attempt} (`docs/bench/memory/{name}/report.json`): "
                 f"`ok` {str(report['ok']).lower()}; max(Θ, W) relative error "
                 f"{fmt(error(report, 'errors_before_polish'), 2)} after the paper's stages (target 1e−3) and "
                 f"{fmt(error(report), 2)} after polishing (target 1e−12); resumed at "
                 f"{', '.join(report['resumed_at'])}; written by {report['provenance']['git_commit']} (learner {learner_label(report)})"
                 + (f", the steps before taken by {', '.join(builds)} (`provenance.earlier_builds`)"
                    if builds else "") + ".", "",
                 "Run time by stage, the report's stage records summed (the time of the segments that were "
                 "stopped between two safe points is not in them; the segments table below has every "
                 "segment's wall and CPU):", ""]
        text += table(["stage", "records", "seconds"], rows, "lrr") + [""]
    if not text:
        return []
    return ["## (128,2,2), end to end", ""] + text[:-1]


def stage_windows(report):
    """(name, start, end) per stage record, the report's stage times laid end to end."""
    t, out = 0.0, []
    for s in report["stages"]:
        name = "polishing" if s["stage"] == "polish" else f"stage {s['stage']}"
        out.append((name, t, t + s["seconds"]))
        t += s["seconds"]
    return out


def peaks_by_stage(report, trace):
    """The largest sampled resident set within each kind of stage's windows (bytes)."""
    peaks = {}
    for name, start, end in stage_windows(report):
        inside = [kb for t, kb in trace if start <= t <= end]
        if inside:
            peaks[name] = max(peaks.get(name, 0), max(inside) * 1024)
    return peaks


def slope(points):
    """Least-squares slope of log y against log x."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def centre_section(rows):
    text = ["## The centre against d", "",
            "One least-squares centre (m = 2, one free direction) of N = min(8·d², 2¹⁴) token slabs in "
            "n = d² unknowns, in a forked child: its wall time and the peak growth of the resident set during "
            "the call (the slabs themselves, N·n doubles, are held before it and not counted). "
            "`dense`: M whole, Householder QR, BDCSVD of R; `streamed`: [M | c] folded into its triangular factor "
            "1024 rows at a time, bidiagonal singular values, inverse iteration "
            "(src/geometry/convex_body_centre_streamed.cpp). The formula columns are "
            "`ConvexBody::dense_centre_bytes` and `streamed_centre_bytes`, which choose the method "
            "(`automatic`: dense while its formula is ≤ 256 MiB).", ""]
    body = []
    for (method, d), e in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        formula = e["dense_centre_bytes"] if method == "dense" else e["streamed_centre_bytes"]
        body.append([str(d), f"{int(e['unknowns'])}", f"{int(e['slabs'])}", method, secs(e["seconds"]),
                     f"{e['peak_growth_bytes'] / 1e6:.0f}", f"{formula / 1e6:.0f}"])
    text += table(["d", "n = d²", "slabs N", "method", "seconds", "peak growth (MB)", "formula (MB)"], body, "rrrlrrr")
    return text


def learn_section(directory, run):
    time_path = os.path.join(directory, RUN + ".time")
    if not os.path.exists(time_path):
        return [], None
    wall, user, system, peak = read_time(time_path)
    report = json.load(open(os.path.join(directory, RUN + ".report.json")))
    trace = [tuple(map(float, line.split())) for line in open(os.path.join(directory, RUN + ".rss")) if line.strip()]
    e_wall, e_user, e_system, e_peak = read_time(EARLIER + ".time")
    earlier = json.load(open(EARLIER + ".report.json"))
    verdict = "met" if peak <= TARGET_BYTES else "missed"
    text = ["## The learner end to end at (64,2,2)", "",
            f"Command: `{run['learn_command']}` (the instance of docs/targets.md, scale 6, seed 1; the "
            "reference paths off, as there).", ""]
    learners = Learners(reports=[report])  # the page's learner: this page's run's; the earlier run is marked
    text += table(["run", "wall (s)", "user + system CPU (s)", "peak resident set (GB)",
                   "max(Θ, W) error before polishing", "after polishing", "samples", "learner"],
                  [["this page's", secs(wall), secs(user + system), f"{peak / GB:.2f}",
                    fmt(error(report, "errors_before_polish"), 2), fmt(error(report), 2),
                    f"{report['samples_total']:.3g}", learners.cell(report)],
                   [f"earlier (commit {earlier['provenance']['git_commit'][:7]}, {earlier['provenance']['build']['cpu']})",
                    secs(e_wall), secs(e_user + e_system), f"{e_peak / GB:.2f}",
                    fmt(error(earlier, "errors_before_polish"), 2), fmt(error(earlier), 2),
                    f"{earlier['samples_total']:.3g}", learners.cell(earlier)]], "lrrrrrrl")
    text += ["", learners.note([learner_label(report), learner_label(earlier)])]
    text += ["", f"Target: peak ≤ {TARGET_BYTES / GB:.0f} GB (10⁹ bytes) — **{verdict}** "
             f"({peak / GB:.3f} GB, GNU time's maximum resident set; GB = 10⁹ bytes). The earlier run's files: "
             f"[{EARLIER}.time](../../{EARLIER}.time), [report](../../{EARLIER}.report.json).", ""]
    peaks = peaks_by_stage(report, trace)
    text += ["Largest resident set sampled (every 2 s) within each kind of stage, the stages laid end to end "
             "by the report's times (so the windows are approximate):", ""]
    order = ["stage 1", "stage 2", "stage 3", "stage 4", "stage 5", "stage 6", "polishing"]
    text += table(["stage", "peak sampled (GB)"], [[n, f"{peaks[n] / GB:.2f}"] for n in order if n in peaks], "lr")
    return text, report


def learner_slabs(n):
    """The extended variant's slabs per round after round 0 (learn/options.cpp)."""
    return min(8 * n, max(MAX_SLABS, MIN_SLABS_PER_UNKNOWN * n))


def centre_flops(slabs, n):
    """The streamed centre's leading flop count: the fold 2Nn², the bidiagonalisation (8/3)n³."""
    return 2.0 * slabs * n * n + 8.0 / 3.0 * n ** 3


def projection_section(rows):
    streamed = sorted((d, e["seconds"]) for (method, d), e in rows.items() if method == "streamed" and d >= 32)
    if len(streamed) < 2:
        return []
    alpha = slope(streamed)
    d_last, s_last = streamed[-1]
    n_last = d_last * d_last
    rate = centre_flops(min(8 * n_last, MAX_SLABS), n_last) / s_last  # the benchmark's N at d_last
    text = ["## d = 128 and d = 256, on paper", "",
            f"The streamed centre's time grows as d^{alpha:.1f} over d = {streamed[0][0]}..{d_last} (least squares "
            "on the log–log points above). Its flop count is about 2Nn² + (8/3)n³ with n = d²; the measured "
            f"centre at d = {d_last} runs it at {rate / 1e9:.1f} GFLOP/s on one thread, and the table below "
            "projects each centre at that rate with the learner's slabs: 8·d², at most 2¹⁴ up to d = 90 and "
            "2·d² beyond (src/learn/options.cpp). The learner computes one centre per round; the (64,2,2) run "
            "above ran 6 rounds (round 0, four refinement rounds, the final round). The learner shares the "
            "fold, 2Nn² of the count, over its threads (since 0df2b97), and the bidiagonalisation and the QR "
            "of step 4 too (since b0a766d); the projection is for one thread.", ""]
    body, projected = [], {}
    for d in (64, 128, 256):
        n = d * d
        slabs = learner_slabs(n)
        seconds = s_last if d == d_last else centre_flops(slabs, n) / rate
        slab_bytes = 8.0 * slabs * n
        centre_bytes = 8.0 * ((n + 1) ** 2 + max(1024, n / 2) * (n + 1))  # ConvexBody::streamed_centre_bytes
        polish_bytes = 8.0 * 2 * 2 * n * n  # m = 2 head blocks of JᵀJ and their Cholesky factors
        projected[d] = (seconds, max(slab_bytes + centre_bytes, polish_bytes))
        body.append([str(d), str(n), str(slabs), secs(seconds) + (" (measured)" if d == d_last else ""),
                     f"{6 * seconds / 3600:.2g}", f"{slab_bytes / GB:.2f}", f"{centre_bytes / GB:.2f}",
                     f"{polish_bytes / GB:.2f}"])
    text += table(["d", "n", "slabs", "one centre (s)", "6 centres (h)", "slabs (GB)", "centre (GB)",
                   "polishing's blocks (GB)"], body, "rrrrrrrr")
    s128, m128 = projected[128]
    s256, m256 = projected[256]
    text += ["", f"So (128,2,2) end to end does not fit in an hour on this machine: its six centres alone are "
             f"projected at {6 * s128 / 3600:.1f} h ({secs(s128)} s each on one thread). Its peak memory, the larger "
             "of the slabs with the centre and polishing's blocks (the slabs are dropped before polishing), would be "
             f"{m128 / GB:.1f} GB: within this machine's 24 GB. At d = 256 the same is {m256 / GB:.0f} GB and "
             f"{6 * s256 / 3600:.0f} h: polishing's block preconditioner and the centre both have to change before "
             "d = 256 can run. The memory columns are the formulas (slabs N·n doubles; the streamed centre "
             "(n+1)² + max(1024, n/2)·(n+1) doubles; polishing's preconditioner m blocks of n² doubles and their "
             "factors), not measurements. GB here is 10⁹ bytes."]
    return text


def page(directory):
    run = json.load(open(os.path.join(directory, "run.json")))
    rows = centre_rows(json.load(open(os.path.join(directory, "centre.json"))))
    text = ["# Memory at large d", "",
            "What the learner holds at d = 64 and what d = 128 and 256 would need. Made by "
            f"`{run['command']}` (centres: `{run['centre_command']}`).", "",
            f"Machine: {run['machine']}, {run['cpus']} CPUs; commit {run['commit']}; run {run['date']}; "
            f"load average (1, 5, 15 min) before {run['load_before']}, after {run['load_after']}.", ""]
    if float(run["load_before"].split()[0]) >= 1.0:
        text += ["**The machine was not idle before the run** (1-minute load average ≥ 1): times are "
                 "upper bounds; resident sets do not depend on the load.", ""]
    learn, _ = learn_section(directory, run)
    text += learn + [""] + centre_section(rows) + [""] + projection_section(rows)
    end_to_end = d128_end_to_end_section(directory)
    if end_to_end:
        text += [""] + end_to_end
    segments = segments_section(directory)
    if segments:
        text += [""] + segments
    notes = os.path.join(directory, "NOTES.md")  # what the runs and attempts say, written by hand beside them
    if os.path.exists(notes):
        text += ["", "## What the attempts say", "", open(notes).read().rstrip("\n")]
    return "\n".join(text) + "\n"


if __name__ == "__main__":
    page_main(__doc__, page, "docs/bench/memory.md")
