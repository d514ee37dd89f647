"""The results page's convergence section: the paper's stages as written (`--variant paper`)
at growing budgets, error before polishing against total samples, the fitted rate, where
it would reach 1e-3, and what each stage's lemma says about its own error at those budgets.

Every sample budget of the paper variant is scaled by one factor f (stage 1's samples,
round 0's, stage 4's, stage 3's cap and its events) and so is stage 6's net (its tuples:
a computation budget, not samples, but its resolution bounds the error too). Runs are
`learn --variant paper --no-polish --no-reference` with those options, through
results.py's `learn` (scripts/experiments.py). Standard library only.
"""
import math

SHAPES = [(16, 2, 2, 6), (32, 2, 2, 6)]
FACTORS = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64]
# The paper variant's defaults (mhalearn learn --help), each multiplied by f.
BASE = [("--stage1-samples", 200000), ("--crude-sculpt-samples", 400000), ("--sculpt-samples", 2000000),
        ("--margin-samples", 20000000), ("--net-tuples", 20000)]
TARGET = 1e-3


def factor_tag(f):
    return f"x{f:g}".replace(".", "p")


def budget_options(f, d):
    """The learn options of budget factor f at dimension d (stage 3's events: 16·d by default)."""
    out = []
    for flag, base in BASE + [("--margin-events", 16 * d)]:
        out += [flag, str(max(1, round(base * f)))]
    return out


def runs(learn, instance):
    """{(d, k, m, scale): [(f, report or None, status)]} for every shape and factor."""
    rows = {}
    for d, k, m, scale in SHAPES:
        tag = f"d{d}_k{k}_m{m}_scale{scale}_seed1"
        inst = instance(tag, d, k, m, scale, 1)
        rows[(d, k, m, scale)] = []
        for f in FACTORS:
            extra = ["--variant", "paper", "--no-polish", "--no-reference"] + budget_options(f, d)
            report, status, _ = learn(f"convergence_paper_{tag}_{factor_tag(f)}", inst, extra)
            rows[(d, k, m, scale)].append((f, report, status))
    return rows


# --------------------------------------------------------------------------- reading a run


def stage(report, name):
    """The last record of stage `name` that is not a reference or oracle row (the paper runs once)."""
    rows = [s for s in report["stages"] if s["stage"] == name and "reference" not in s and not s.get("oracle")]
    return rows[-1] if rows else {}


def final_error(report):
    e = report.get("errors_before_polish") or report.get("errors")
    return max(e["theta_max_rel"], e["w_max_rel"]) if e else None


def margin_bias_bound(k, threshold):
    """Lemma 3.3.1's sharp bound S(k, M): how far a softmax with margin ≥ M is from one-hot (ℓ1)."""
    q = (k - 1) * math.exp(-threshold)
    return 2 * q / (1 + q)


def point(f, report):
    """One run's numbers: total samples, each stage's error and the lemma-level terms."""
    s1, s3, s4, s6 = (stage(report, n) for n in ("1", "3", "4", "6"))
    return dict(f=f, samples=report["samples_paper_stages"], seconds=report["seconds"], error=final_error(report),
                s1_err=s1.get("w_sum_rel_error"), s1_se=s1.get("standard_error_rel"), s1_n=s1.get("samples"),
                s3_err=s3.get("w_sum_rel_error"), s3_se=s3.get("relative_standard_error"), s3_events=s3.get("events"),
                s3_n=s3.get("samples"), s3_threshold=s3.get("threshold"),
                s4_hull=s4.get("hull_error"), s4_typical=s4.get("hull_error_typical"), s4_bound=s4.get("hull_error_bound"),
                s4_slabs=s4.get("constraints"), s4_n=s4.get("samples"), s4_violation=s4.get("theta_max_violation"),
                s6_resolution=s6.get("final_resolution"), s6_tuples=s6.get("tuples_exhaustive"))


# --------------------------------------------------------------------------- rates


def slope(xs, ys):
    """Least-squares slope and intercept of log y on log x (None with fewer than two points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x and y]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if not sxx:
        return None
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
    return b, my - b * mx


def samples_at(fit, target=TARGET):
    """Samples where the fitted power law reaches `target` (None when it does not fall)."""
    if fit is None or fit[0] >= 0:
        return None
    b, a = fit
    return math.exp((math.log(target) - a) / b)
