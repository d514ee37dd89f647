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

import functools
import warnings

from . import _core
from ._core import Instance, __version__, arithmetic, git_commit


def _split_top_level(text):
    """'a: int, b: List[str] = [1, 2]' -> ['a: int', 'b: List[str] = [1, 2]']."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[(" 
        depth -= c in "])"
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _accepts(annotation, value):
    """Whether pybind11 would take `value` for a parameter annotated so (the common cases)."""
    import numbers
    if annotation == "int":
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if annotation == "float":
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if annotation == "bool":
        return isinstance(value, bool)
    if annotation == "str":
        return isinstance(value, str)
    if annotation.endswith("Instance"):
        return isinstance(value, Instance)
    if annotation.startswith(("List[str]", "list[str]")):
        return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    return True  # arrays, dicts, objects: checked inside, with their own one-line errors


def _type_error_line(name, message, args, kwargs):
    """pybind11's multi-line 'incompatible function arguments' as one line naming the argument."""
    import re
    sig = re.search(r"1\. \((.*)\) ->", message)
    if not sig:
        return f"mhalearn.{name}: incompatible arguments"
    params = [p for p in _split_top_level(sig.group(1)) if p not in ("*", "/")]
    names = [p.split(":")[0].strip() for p in params]
    annotations = {n: p.split(":", 1)[1].split("=")[0].strip() if ":" in p else "" for n, p in zip(names, params)}
    given = dict(zip(names, args))
    for key in kwargs:
        if key not in annotations:
            return f"mhalearn.{name}: unexpected keyword argument '{key}' (takes {', '.join(names)})"
    given.update(kwargs)
    if len(args) > len(names):
        return f"mhalearn.{name}: takes at most {len(names)} arguments ({', '.join(names)}), got {len(args)}"
    for n, value in given.items():
        if not _accepts(annotations[n], value):
            return f"mhalearn.{name}: argument '{n}' must be {annotations[n]}, got {type(value).__name__}"
    missing = [n for n, p in zip(names, params) if "=" not in p and n not in given]
    if missing:
        return f"mhalearn.{name}: missing argument '{missing[0]}'"
    return f"mhalearn.{name}: incompatible arguments; expected ({sig.group(1)})"


def _one_line_errors(name, fn):
    """The module's function with pybind11's multi-line TypeError made one line."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if "incompatible function arguments" not in str(e) and "incompatible constructor arguments" not in str(e):
                raise
            raise TypeError(_type_error_line(name, str(e), args, kwargs)) from None
    return call


check = _one_line_errors("check", _core.check)
forward = _one_line_errors("forward", _core.forward)
generate = _one_line_errors("generate", _core.generate)
import_attention = _one_line_errors("import_attention", _core.import_attention)
read_instance = _one_line_errors("read_instance", _core.read_instance)
sample = _one_line_errors("sample", _core.sample)
write_instance = _one_line_errors("write_instance", _core.write_instance)

__all__ = ["Instance", "LearnFailed", "LearnerDiagnostic", "ReferenceDisagreement", "RunFailed", "check", "forward",
           "demo", "from_torch", "generate", "hard", "import_attention", "learn", "read_instance", "sample", "sculpt", "stage1",
           "study_wsum", "verify", "write_instance", "__version__"]


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


def verify(instance, stages=("all",), *, seed=1, threads=None, layer=None):
    """Each stage's fast path against its reference path on the same inputs, as
    `mhalearn verify --json`: a list of rows. `layer` (an Instance, as the CLI's
    --layer): polishing's objective evaluated at that layer. Raises
    ReferenceDisagreement (with every row attached) when one disagrees after
    escalation."""
    kwargs = {"seed": seed}
    if threads is not None:
        kwargs["threads"] = threads
    if layer is not None:
        kwargs["layer"] = layer
    if isinstance(stages, str):
        raise TypeError("mhalearn.verify: argument 'stages' must be a list of stage names, got str")
    rows = _one_line_errors("verify", _core.verify)(instance, list(stages), **kwargs)
    bad = _disagreeing(rows)
    if bad:
        raise ReferenceDisagreement(_first_disagreement(bad), bad, all_rows=rows)
    return rows


class RunFailed(RuntimeError):
    """A run stopped without its result (the CLI's exit status 1); `.report` says where."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


class LearnFailed(RunFailed):
    """The learner stopped without a layer (the CLI's exit status 1); `.report` says where."""


def _surface(core):
    """The decorated function takes the arguments of `core` (its signature and
    docstring first, as help() shows them), then its own docstring."""
    def decorate(fn):
        own = fn.__doc__ or ""
        functools.update_wrapper(fn, core)
        fn.__doc__ = (core.__doc__ or "") + "\n\n" + own
        return fn
    return decorate


def _raise_on_status(name, status, error, report, stage):
    """The CLI's exit statuses as exceptions: 4 ReferenceDisagreement, any other RunFailed."""
    if status == 4:
        raise ReferenceDisagreement(f"mhalearn.{name}: {error}", [stage], report=report)
    if status != 0:
        raise RunFailed(f"mhalearn.{name}: {error}", report)


@_surface(_core.stage1)
def stage1(*args, **kwargs):
    """Stage 1 (as `mhalearn stage1`) on an Instance's oracle or on x, y arrays:
    (w_hat, standard_error, report), numpy arrays and the CLI's --report dict."""
    import numpy
    status, error, report, output = _one_line_errors("stage1", _core.stage1)(*args, **kwargs)
    _raise_on_status("stage1", status, error, report, report["stages"][-1])
    return numpy.array(output["matrix"]), numpy.array(output["standard_error"]), report


@_surface(_core.sculpt)
def sculpt(*args, **kwargs):
    """Stages 1 and 2 (as `mhalearn sculpt`): (body, report), the body K as the
    CLI's -o writes it (format mhalearn.body: dim, radius, slabs with a, b, eta)."""
    status, error, report, output = _one_line_errors("sculpt", _core.sculpt)(*args, **kwargs)
    _raise_on_status("sculpt", status, error, report, report["stages"][-1])
    return output, report


@_surface(_core.hard)
def hard(*args, **kwargs):
    """The SQ-hard family F_S (as `mhalearn hard`): (instance, report) with the
    CLI's --json report; with study=True the conditioning study's report (as
    `mhalearn hard --study --json`). Raises RunFailed when a check fails."""
    status, error, report, instance = _one_line_errors("hard", _core.hard)(*args, **kwargs)
    _raise_on_status("hard", status, error, report, report)
    return report if kwargs.get("study") else (instance, report)


study_wsum = _one_line_errors("study_wsum", _core.study_wsum)


def learn(source, y=None, m=None, *, seed=1, **options):
    """Learn a layer end to end, as `mhalearn learn`: the six stages and polishing
    (method="paper", the default), or a baseline on the same samples: "adam" (gradient training
    of the same form) or "random-polish" (polishing alone from random starts).

    source: an Instance (samples from its oracle with `seed`; the report then has
    the errors against it), or inputs X (N, k, d) int8 +-1 / float64 with labels
    `y` (N, k, d) float64 and the number of heads `m` (label noise drawn with `seed`).
    options: the CLI's flags with underscores (--no-polish and --no-reference
    are polish=False and reference=False), listed below from the CLI's option
    table with their defaults, ranges and the methods that read them.
    Returns (learned Instance, report dict); the report has the CLI's --report
    keys plus "table", the CLI's printed table. As in the CLI, SIGINT or SIGTERM
    stops the run at its next safe point (after writing the checkpoint, with
    checkpoint=) and raises LearnFailed; continue it with resume=.
    """
    if isinstance(source, Instance):
        if y is not None:
            raise ValueError("give either an instance or X, y and m, not both")
        if m is not None and m != source.m:
            raise ValueError("m differs from the instance's number of heads")
        layer, report = _one_line_errors("learn", _core.learn_instance)(source, seed, options)
    else:
        if y is None or m is None:
            raise ValueError("with arrays give X, y and the number of heads m")
        layer, report = _one_line_errors("learn", _core.learn_data)(source, y, m, seed, options)
    if layer is None:
        raise LearnFailed(report["message"], report)
    _learner_verdict(report, layer, report)
    return layer, report


def _learner_verdict(learner_report, layer, report):
    """As the CLI's learner_exit_status: the diagnostics as warnings, and ReferenceDisagreement
    (with `report` and `layer` attached) when a fast path disagrees with its reference."""
    for d in learner_report.get("diagnostics", []):
        if d["warning"]:
            where = f", round {d['round']}" if "round" in d else ""
            warnings.warn(f"stage {d['stage']}{where}: {d['name']}: {d['detail']}", LearnerDiagnostic, stacklevel=3)
    bad = _disagreeing(learner_report.get("reference", []))
    if bad:
        raise ReferenceDisagreement(_first_disagreement(bad), bad, report=report, layer=layer)


@_surface(_core.demo)
def demo(*args, **kwargs):
    """The default instance generated, sampled, checked and learned end to end, into the
    folder `out` (instance.json, X.npy, Y.npy, learned.json, report.json), as `mhalearn demo`
    with the same options: (report, text), the report as OUT/report.json holds it and the
    text the CLI prints. The learner's options are learn's for the paper's learner (listed
    below). Raises RunFailed (LearnFailed when the learner stopped) and ReferenceDisagreement
    as learn does, the latter also when the forward cross-check disagrees."""
    status, error, report, text = _one_line_errors("demo", _core.demo)(*args, **kwargs)
    if status == 4 and report is None:  # the forward cross-check
        raise ReferenceDisagreement(f"mhalearn.demo: {error}", [], report=report)
    if status != 0:
        failed = LearnFailed if report is not None and "learn" in report else RunFailed
        raise failed(f"mhalearn.demo: {error}", report)
    _learner_verdict(report["learn"], None, report)
    return report, text


def _options_doc(rows):
    """learn's options as help() prints them, one entry per row of the CLI's option table."""
    lines = ["", "Options (the CLI's option table):", ""]
    for r in rows:
        default = r["default"]
        if r["negated"]:
            default = {"false": "True", "true": "False"}.get(default, default)
        kind = "bool" if r["type"] == "flag" else {"integer": "int", "number": "float", "text": "str"}[r["type"]]
        in_range = f", in {r['range']}" if r["range"] else ""
        lines.append(f"    {r['keyword']} ({kind}, default {default}{in_range}; {r['methods']}):")
        lines.append(f"        {r['help']}")
    return "\n".join(lines)


learn.__doc__ += _options_doc(_core.learn_option_table())
demo.__doc__ += _options_doc(_core.demo_option_table())


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
