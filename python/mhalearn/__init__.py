"""mhalearn from Python: the C++ library of the `mhalearn` CLI, numpy in and out.

    import mhalearn
    inst = mhalearn.generate(16, 2, 2, scale=3, seed=21)
    X, Y = mhalearn.sample(inst, 1000, seed=1)
    Y_ref = mhalearn.forward(inst, X, path="reference", precision=200)
    learned, report = mhalearn.learn(inst, rounds=3)

Bad arguments raise ValueError with the CLI's one-line message; a learner run
that cannot finish raises LearnFailed (a RuntimeError) carrying its report; a
fast path that disagrees with its reference path beyond the derived bound,
after escalation — the CLI's exit status 4 — raises ReferenceDisagreement
carrying the rows (from learn and verify alike). A learner diagnostic marked
as a warning (a statistical outcome, never a disagreement) is issued as a
LearnerDiagnostic warning. Long computations release the GIL; progress goes to
stderr as in the CLI.
"""

import warnings

from ._core import (Instance, __version__, arithmetic, check, forward, generate, git_commit,
                    import_attention, read_instance, sample, write_instance)
from . import _core

__all__ = ["Instance", "LearnFailed", "LearnerDiagnostic", "ReferenceDisagreement", "check", "forward", "from_torch",
           "generate", "import_attention", "learn", "read_instance", "sample", "verify", "write_instance",
           "__version__"]


class ReferenceDisagreement(RuntimeError):
    """A fast path disagrees with its reference path beyond the derived bound, after
    escalation (the CLI's exit status 4). `.rows` are the disagreeing rows (as
    `mhalearn verify --json` prints them); from learn, `.report` and `.layer` are
    the run's report and learned layer, from verify `.all_rows` are every row."""

    def __init__(self, message, rows, report=None, layer=None, all_rows=None):
        super().__init__(message)
        self.rows = rows
        self.report = report
        self.layer = layer
        self.all_rows = all_rows


class LearnerDiagnostic(UserWarning):
    """A statistical outcome of a learner run worth attention (the body not thin
    across the hull, the proxy far from the minimum-norm point of K, ...): the
    CLI's stderr warnings. Never a disagreement of two computations."""


def _disagreeing(rows):
    return [r for r in rows if r["verdict"] == "DISAGREE"]


def _first_disagreement(rows):
    """The CLI's one line: how many rows disagree, and what in the first one."""
    r = rows[0]
    where = f" (round {r['round']})" if "round" in r else ""
    return (f"a fast path disagrees with its reference beyond the derived bound (after escalation), {len(rows)} row(s); "
            f"first: stage {r['stage']}{where}: {r['disagreement']}")


def verify(instance, stages=("all",), *, seed=1, threads=None):
    """Each stage's fast path against its reference path on the same inputs, as
    `mhalearn verify --json`: a list of rows. Raises ReferenceDisagreement (with
    every row attached) when one disagrees after escalation."""
    kwargs = {"seed": seed}
    if threads is not None:
        kwargs["threads"] = threads
    rows = _core.verify(instance, list(stages), **kwargs)
    bad = _disagreeing(rows)
    if bad:
        raise ReferenceDisagreement(_first_disagreement(bad), bad, all_rows=rows)
    return rows


class LearnFailed(RuntimeError):
    """The learner stopped without a layer (the CLI's exit status 1); `.report` says where."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def learn(source, y=None, m=None, *, seed=1, **options):
    """Learn a layer end to end (stages 1-6, then polishing), as `mhalearn learn`.

    source: an Instance (samples from its oracle with `seed`; the report then has
    the errors against it), or inputs X (N, k, d) int8 +-1 / float64 with labels
    `y` (N, k, d) float64 and the number of heads `m`.
    options: the CLI's flags with underscores: threads, max_seconds,
    stage1_samples, rounds, sculpt_samples, crude_sculpt_samples, constraints,
    margin_samples, accept_fraction, radius, net_tuples, validation_samples,
    test_samples, reference_max_unknowns, polish (bool), reference (bool),
    variant ("paper" or "extended", the default), final_sculpt_samples,
    oracle ("stage1,hull,stage3,stage6" or a subset: those stages' products
    taken from the truth, instances only).
    Returns (learned Instance, report dict); the report has the CLI's --report
    keys plus "table", the CLI's printed table.
    """
    if isinstance(source, Instance):
        if y is not None:
            raise ValueError("give either an instance or X, y and m, not both")
        if m is not None and m != source.m:
            raise ValueError("m differs from the instance's number of heads")
        layer, report = _core.learn_instance(source, seed, options)
    else:
        if y is None or m is None:
            raise ValueError("with arrays give X, y and the number of heads m")
        layer, report = _core.learn_data(source, y, m, options)
    if layer is None:
        raise LearnFailed(report["message"], report)
    for d in report.get("diagnostics", []):
        if d["warning"]:
            where = f", round {d['round']}" if "round" in d else ""
            warnings.warn(f"stage {d['stage']}{where}: {d['name']}: {d['detail']}", LearnerDiagnostic, stacklevel=2)
    bad = _disagreeing(report.get("reference", []))
    if bad:
        raise ReferenceDisagreement(_first_disagreement(bad), bad, report=report, layer=layer)
    return layer, report


def from_torch(module, *, k=2, inputs="boolean"):
    """The instance computing what a bias-free torch.nn.MultiheadAttention computes.

    PyTorch applies the module to (query, key, value) sequences; with
    query = key = value = X, one sequence X (k, d) of the module (rows are
    tokens, batch_first or not) maps to the instance's F(X) (MATH.md section 1,
    src/model/import_attention.cpp): W_Q, W_K, W_V are the three row blocks
    of in_proj_weight, W_O is out_proj.weight, and head h uses rows
    h*d/H .. (h+1)*d/H - 1. Dropout must be 0 (or the module in eval mode).
    """
    import torch  # only this function needs PyTorch

    if not isinstance(module, torch.nn.MultiheadAttention):
        raise ValueError(f"from_torch: expected a torch.nn.MultiheadAttention, got {type(module).__name__}")
    if not module._qkv_same_embed_dim:
        raise ValueError("from_torch: kdim/vdim differ from embed_dim; only self-attention of one width is supported")
    if module.in_proj_bias is not None or module.out_proj.bias is not None:
        raise ValueError("from_torch: the module has biases; only bias=False attention maps onto the layer")
    if module.bias_k is not None or module.bias_v is not None:
        raise ValueError("from_torch: add_bias_kv=True adds a key/value token; not supported")
    if module.add_zero_attn:
        raise ValueError("from_torch: add_zero_attn=True adds a zero token; not supported")
    if module.training and module.dropout > 0:
        raise ValueError("from_torch: attention dropout is active; call module.eval() or use dropout=0")

    def weights(t):
        return t.detach().to(device="cpu", dtype=torch.float64).numpy()

    wq, wk, wv = weights(module.in_proj_weight).reshape(3, module.embed_dim, module.embed_dim)
    return import_attention(wq, wk, wv, weights(module.out_proj.weight), module.num_heads, k=k, inputs=inputs)
