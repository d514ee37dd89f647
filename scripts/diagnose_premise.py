"""The diagnosis page's section on Lemma 3.3.1's premise in the paper variant (MATH.md §3.3).

The lemma bounds an event's bias only when every *true* head's margin on the event's token j*
is at least M; the learner sees the proxy's margin alone. The paper variant's stage 3 keeps the
rows of largest proxy margin of its whole budget (at least M), and its report measures the
premise on them with the truth: the share of events where some true head is below M
(`premise_fails`), the median of the smallest true margin, Corollary 3.3.2's mean bias bound,
and, for comparison, the rule "threshold M on the proxy" over the same budget
(`lemma_rule_*`: its rows, their premise share, and W_Σ fitted on them).

Nothing is run here: the rows are the paper variant's runs of the theorem's-shape page
(docs/theorem_shape/floor_paper_*, every sample budget scaled by one factor), read from their
reports. Standard library only.
"""
import glob
import json
import math
import os
import re

from experiments import fmt, fmt_int, learner_label, table

RUNS = "docs/theorem_shape"
NAME = re.compile(r"floor_paper_d(\d+)_k(\d+)_m(\d+)_scale\d+_seed\d+_x([0-9.]+)\.report\.json$")


def stage3(report):
    """The paper run's stage-3 record (it runs once), or None."""
    rows = [s for s in report.get("stages", []) if s["stage"] == "3" and "reference" not in s and not s.get("oracle")]
    return rows[-1] if rows else None


def runs(root):
    """[((d, k, m, factor), report)] of the paper variant's floor runs, in (m, d, factor) order."""
    out = []
    for path in glob.glob(os.path.join(root, RUNS, "floor_paper_*.report.json")):
        match = NAME.search(path)
        if match:
            d, k, m, f = match.groups()
            with open(path) as fh:
                out.append(((int(d), int(k), int(m), float(f)), json.load(fh)))
    return sorted(out, key=lambda x: (x[0][2], x[0][0], x[0][3]))


def number(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def trend(rows):
    """Per (d, k, m) with two or more layers: does stage 3's W_Σ error fall with the budget?"""
    out = []
    groups = {}
    for (d, k, m, f), report in rows:
        s = stage3(report)
        if s and s.get("events_kept", 0) > 0 and number(s.get("w_sum_rel_error")) is not None:
            groups.setdefault((d, k, m), []).append((f, s["w_sum_rel_error"]))
    for (d, k, m), points in groups.items():
        if len(points) < 2:
            continue
        (f0, e0), (f1, e1) = points[0], points[-1]
        word = "falls" if e1 < e0 / 2 else "rises" if e1 > 2 * e0 else "stays within 2×"
        out.append(f"- ({d},{k},{m}): from ×{f0:g} to ×{f1:g} stage 3's W_Σ error {word} ({fmt(e0)} → {fmt(e1)}).")
    return out


def section(root, learners):
    """The section's lines (a heading, what it measures, the table, the trend, the learner note)."""
    rows = runs(root)
    lines = ["", "## Lemma 3.3.1's premise in the paper variant", "",
             "The lemma bounds an event's bias only when every true head's margin on the event's token is at least "
             "M = ln(2(k − 1)/10⁻²); the learner sees only the proxy's margin (MATH.md §3.3, open choice 8 of §3.9). "
             "The paper variant keeps the rows of largest proxy margin of its whole budget (at least M, 16·d of them); "
             "each run's report measures the premise on them with the truth, and, for comparison, the rule \"threshold "
             "M on the proxy\" over the same budget. Rows: the paper variant's runs of "
             f"[theorem_shape.md](theorem_shape.md) (every sample budget × the factor), read from their reports in "
             f"`{RUNS}/` (scripts/diagnose_premise.py).", ""]
    if not rows:
        return lines + ["No paper-variant run of the theorem's-shape page has been made yet.", ""]
    cells = []
    for (d, k, m, f), report in rows:
        s = stage3(report)
        if s is None:
            cells.append([f"({d},{k},{m})", f"×{f:g}", report.get("message") or "no stage 3"] + ["–"] * 9
                         + [learners.cell(report)])
            continue
        fitted = s.get("events_kept", 0) > 0  # no event kept: no W_Σ was fitted (the run stopped there)
        cells.append([f"({d},{k},{m})", f"×{f:g}", s.get("proxy", "–"),
                      f"{s.get('events_kept', '–')} of {s.get('events', '–')}", fmt(s.get("threshold"), 2),
                      fmt(s.get("premise_fails"), 2) if s.get("events") else "–",
                      fmt(s.get("median_true_margin"), 2) if s.get("events") else "–",
                      fmt(s.get("mean_event_bias_bound")) if s.get("events") else "–",
                      fmt(number(s.get("w_sum_rel_error"))) if fitted else "no fit",
                      fmt_int(s.get("lemma_rule_rows")), fmt(number(s.get("lemma_rule_premise_fails")), 2),
                      fmt(number(s.get("lemma_rule_w_sum_rel_error"))), learners.cell(report)])
    lines += table(["(d,k,m)", "budget ×", "proxy", "events kept", "threshold met", "share with a true head below M",
                    "median smallest true margin", "mean bias bound (Cor. 3.3.2)", "W_Σ error",
                    "rule \"M on the proxy\": rows", "their share below M", "their W_Σ error", "learner"], cells,
                   "lllrrrrrrrrrl")
    lines += [""] + (trend(rows) or ["No configuration has two budgets with a stage-3 estimate yet."])
    lines += ["", learners.note([learner_label(r) for _, r in rows]), ""]
    return lines
