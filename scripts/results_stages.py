"""The results page's per-stage tables: the `paper` variant (the sources' steps, MATH.md §6)
against `extended`, stage by stage, on §1's runs — the same instances, the same sample
stream (seed 1), both with `--no-reference`. Nothing is run here: the tables are read
from the side-by-side runs' reports.

Which record of a stage a table shows: the one in the chain that made the run's layer.
Stages 4, 5 and 6 are the records of the report's `best_round`; stage 3 is the last
stage-3 record of an earlier round (the W_Σ that round's body was cut from); stages 1
and 2 run once (stage 2 is round 0's crude body). Samples and seconds are a stage's sum
over every round, what the stage cost the run. Standard library only.
"""
from statistics import median

# (stage, title, what the variants do there, the error's label, how to read the error from a record)
STAGES = [
    ("1", "Stage 1: the crude W_Σ",
     "the same statistic and budget in both variants (MATH.md §6, row 3)",
     "Ŵ relative error", lambda s: s.get("w_sum_rel_error")),
    ("2", "Stage 2: the crude body (round 0)",
     "the same budget; paper: each sample's first row certified, extended: every row (§6, row 5)",
     "hull error", lambda s: s.get("hull_error")),
    ("3", "Stage 3: W_Σ from large-margin events",
     "paper: the proxy is the minimum-norm point of K (the body's least-squares centre where K is empty), "
     "the largest proxy margins of the whole budget, 16·d events; extended: round 0's centre, then the net's "
     "heads of the round before, a pilot quantile as threshold (§6, rows 8, 9)",
     "W_Σ relative error", lambda s: s.get("w_sum_rel_error")),
    ("4", "Stage 4: the body from W_Σ",
     "paper: one pass, first rows, τ fixed from the W error; extended: every row, τ from the smallest "
     "residuals, rounds of stages 3 ⇄ 4 chosen by validation and a final round on its own budget (§6, rows 5, "
     "10, 13)",
     "hull error", lambda s: s.get("hull_error")),
    ("5", "Stage 5: the span",
     "paper: the span from membership queries to K (cutting planes through its separation oracle); "
     "extended: the hull read off the weighted constraint matrix, its dimension by the singular-value gap, "
     "no span error of its own (§6, row 11)",
     "span error", lambda s: s.get("span_error")),
    ("6", "Stage 6: the net",
     "paper: the exhaustive net over the span, m axes about 0; extended: a net over the (m−1)-dimensional "
     "affine hull, refined by pattern search (§6, row 12)",
     "max(Θ, W) error", lambda s: max(s["theta_max_rel"], s["w_max_rel"]) if "theta_max_rel" in s else None),
]


def records(report):
    """The report's stage records that are the learner's own (no reference or oracle rows)."""
    return [s for s in report["stages"] if "reference" not in s and not s.get("oracle")]


def chain_record(report, stage):
    """The record of `stage` in the chain that made the layer (module docstring), or None."""
    rows = [s for s in records(report) if s["stage"] == stage]
    best = report.get("best_round")
    if stage in ("4", "5", "6"):
        rows = [s for s in rows if s.get("round") == best]
    elif stage == "3" and best is not None:
        rows = [s for s in rows if s.get("round", 0) < best]
    return rows[-1] if rows else None


def stage_cost(report, stage):
    """(samples, seconds) the stage used over every round."""
    rows = [s for s in records(report) if s["stage"] == stage]
    return sum(s.get("samples", 0) for s in rows), sum(s.get("seconds", 0.0) for s in rows)


def _median(values):
    values = [v for v in values if v is not None]
    return median(values) if values else None


def stage_tables(rows, variants, variant_label, fmt, fmt_int, table, learner_cells, note):
    """Markdown: one table per stage, one row per (shape, scale) with medians over its seeds.
    rows: results.py's side-by-side rows (r["papers"][variant] = (report, status, wall));
    learner_cells(reports) and note(reports): the page's learner column and its note."""
    if not {"paper", "extended"} <= set(variants):
        return "This build has no `paper` and `extended` variants to compare."
    groups = {}
    for r in rows:
        groups.setdefault((r["d"], r["k"], r["m"], r["scale"]), []).append(r)
    out = []
    for stage, title, what, label, read in STAGES:
        header = ["(d,k,m)", "scale", "runs"]
        header += [f"{variant_label(v)}: {label}" for v in ("paper", "extended")]
        header += [f"{variant_label(v)}: {c}" for c in ("samples", "seconds") for v in ("paper", "extended")]
        header += ["learner"]
        cells = []
        for (d, k, m, scale), rs in groups.items():
            reports = {v: [r["papers"][v][0] for r in rs if r["papers"][v][0]] for v in ("paper", "extended")}
            line = [f"({d},{k},{m})", scale, len(rs)]
            for v in ("paper", "extended"):
                recs = [chain_record(p, stage) for p in reports[v]]
                line.append(fmt(_median([read(s) if s else None for s in recs])))
            for column in (0, 1):
                for v in ("paper", "extended"):
                    costs = [stage_cost(p, stage)[column] for p in reports[v]]
                    value = _median(costs)
                    if column == 0:
                        line.append(fmt_int(None if value is None else int(round(value))))
                    else:
                        line.append("–" if value is None else f"{value:.2f}")
            line.append(learner_cells(reports["paper"] + reports["extended"]))
            cells.append(line)
        out += [f"#### {title}", "", what[0].upper() + what[1:] + ".", ""]
        out += table(header, cells, "lrr" + "rr" + "rrrr" + "l")
        out.append("")
    out.append(note([r["papers"][v][0] for r in rows for v in ("paper", "extended") if r["papers"][v][0]]))
    return "\n".join(out)
