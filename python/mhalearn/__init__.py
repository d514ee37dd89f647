"""mhalearn from Python: the C++ library of the `mhalearn` CLI, numpy in and out.

    import mhalearn
    inst = mhalearn.generate(16, 2, 2, scale=3, seed=21)
    X, Y = mhalearn.sample(inst, 1000, seed=1)
    Y_ref = mhalearn.forward(inst, X, path="reference", precision=200)
    learned, report = mhalearn.learn(inst, rounds=3)

Each function is a subcommand of the CLI, made from its one declaration
(src/commands/schema.hpp; mhalearn._core.commands() has them all): every
option but the files the CLI writes and its printing is an argument of the
same name ('-' as '_'), with the same default and range; help(mhalearn.sample)
lists them. Paths are str, bytes or os.PathLike; an instance file may be an
mhalearn.Instance, an array file a numpy array.

A wrong argument raises TypeError (a wrong type) or ValueError (a value the CLI
would refuse with exit 2) with one line naming it; an input the fast path
cannot answer raises OverflowError (the CLI's exit 3); a run that cannot finish
raises RunFailed (LearnFailed from the learner) carrying its report; a fast
path that disagrees with its reference path beyond the derived bound, after
escalation — the CLI's exit 4 — raises ReferenceDisagreement carrying the rows.
What a user should act on is a warning (LearnerDiagnostic from the learner);
the learner's diagnostics, statistical outcomes of its budget, are in its
report. Long computations release the GIL and answer Ctrl-C (KeyboardInterrupt)
within a fraction of a second; progress goes to stderr as in the CLI.
"""

import inspect
import warnings

from . import _core
from ._core import Instance, __version__, arithmetic, git_commit, read_instance, write_instance

__all__ = ["Instance", "LearnFailed", "LearnerDiagnostic", "MhalearnWarning", "ReferenceDisagreement", "RunFailed",
           "check", "demo", "forward", "from_torch", "generate", "hard", "import_attention", "learn", "read_instance",
           "sample", "sculpt", "stage1", "study_wsum", "verify", "write_instance", "__version__"]


class MhalearnWarning(UserWarning):
    """Something a user should act on (a condition the generated instance fails, k·m > d)."""


class LearnerDiagnostic(MhalearnWarning):
    """What a learner run asks the user to act on (labels noisier than certification
    assumed: rerun with assume_label_noise). Never a disagreement of two computations."""


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


class RunFailed(RuntimeError):
    """A run stopped without its result (the CLI's exit status 1); `.report` says where."""

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


class LearnFailed(RunFailed):
    """The learner stopped without a layer (the CLI's exit status 1, or 5 when a
    safe point stopped it); `.report` says where."""


_COMMANDS = {c["python_name"]: c for c in _core.commands() if c["python_name"]}
_PYTHON_TYPES = {"integer": "int", "seed": "int", "number": "float", "text": "str", "flag": "bool",
                 "integers": "list of int", "words": "list of str"}


def _default(option):
    """The default Python shows: the declared one, True for a negated flag, None when the command decides."""
    if option["type"] == "flag":
        return option["negated"]
    if option["default"] is not None:
        return option["default"]
    return None


def _parameters(command):
    """(positional parameters, keyword-only parameters) of the declaration's Python options."""
    options = [o for o in command["options"] if o["python"]]
    positional = sorted((o for o in options if o["python_position"] >= 0), key=lambda o: o["python_position"])
    keyword = [o for o in options if o["python_position"] < 0]
    make = inspect.Parameter
    params = [make(o["keyword"], make.POSITIONAL_OR_KEYWORD,
                   default=make.empty if o["required"] else _default(o)) for o in positional]
    params += [make(o["keyword"], make.KEYWORD_ONLY, default=_default(o)) for o in keyword]
    return params


def _bind(name, params, args, kwargs):
    """The arguments given, by name, or TypeError with one line naming the one that is wrong."""
    positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    if len(args) > len(positional):
        names = ", ".join(p.name for p in positional)
        raise TypeError(f"mhalearn.{name}: takes at most {len(positional)} positional arguments ({names}), got {len(args)}")
    given = {p.name: v for p, v in zip(positional, args)}
    known = {p.name for p in params}
    for key, value in kwargs.items():
        if key not in known:
            raise TypeError(f"mhalearn.{name}: unexpected keyword argument '{key}' (help(mhalearn.{name}) lists them)")
        if key in given:
            raise TypeError(f"mhalearn.{name}: argument '{key}' given twice")
        given[key] = value
    for p in params:
        if p.default is p.empty and p.name not in given:
            raise TypeError(f"mhalearn.{name}: missing argument '{p.name}'")
    return given


def _options_doc(command):
    """Every Python option of the declaration, as help() prints it."""
    lines = ["", "Arguments (the CLI's options: docs/options.md):", ""]
    for o in command["options"]:
        if not o["python"]:
            continue
        kind = _PYTHON_TYPES[o["type"]]
        if o["role"] in ("instance file", "array file", "output folder", "folder read and written"):
            kind = {"instance file": "Instance or path", "array file": "numpy array or path"}.get(o["role"], "path")
        default = "required" if o["required"] else f"default {_default(o)!r}"
        if o["default"] is None and o["default_text"] and o["type"] != "flag":
            default = f"default None: {o['default_text']}"
        within = f", in {o['range']}" if o["range"] else ""
        lines.append(f"    {o['keyword']} ({kind}, {default}{within}):")
        lines.append(f"        {o['help']}")
    return "\n".join(lines)


def _run(name, *args, **kwargs):
    """The subcommand's result ({"status", "error", "value", "outputs", "text", "warnings"}), its warnings issued."""
    command = _COMMANDS[name]
    given = _bind(name, _parameters(command), args, kwargs)
    result = _core.run(command["name"], given)
    category = LearnerDiagnostic if name in ("learn", "demo") else MhalearnWarning
    for line in result["warnings"]:
        warnings.warn(f"mhalearn.{name}: {line}", category, stacklevel=3)
    return result


def _disagreeing(rows):
    return [r for r in rows if r.get("verdict") == "DISAGREE"]


def _raise(name, result, report=None, layer=None, learner=False):
    """The CLI's exit statuses as exceptions: 4 ReferenceDisagreement, 1 and 5 RunFailed (LearnFailed)."""
    status, error = result["status"], result["error"]
    if status == 0:
        return
    message = f"mhalearn.{name}: {error}"
    if status == 4:
        rows = _disagreeing((report or {}).get("reference", [])) if isinstance(report, dict) else []
        raise ReferenceDisagreement(message, rows, report=report, layer=layer)
    raise (LearnFailed if learner else RunFailed)(message, report)


def _command(name, shape):
    """The function of subcommand `name`: its signature and help from the declaration, its
    result shaped by `shape(result)` (which raises as the CLI exits)."""
    command = _COMMANDS[name]

    def call(*args, **kwargs):
        return shape(_run(name, *args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__signature__ = inspect.Signature(_parameters(command))
    call.__doc__ = f"{command['summary']} (as `mhalearn {command['name']}`).\n\n{shape.__doc__ or ''}" + _options_doc(command)
    return call


def _generate(r):
    """Returns the Instance."""
    _raise("generate", r)
    return r["outputs"]["output"]


def _check(r):
    """Returns the condition report (a dict: each check with its value, threshold and verdict); with
    strict=True raises RunFailed when a condition fails."""
    _raise("check", r, r["value"])
    return r["value"]


def _sample(r):
    """Returns (X, Y): X int8 +-1 (Boolean inputs) or float64 (Gaussian), Y float64, both (n, k, d)."""
    _raise("sample", r)
    return r["outputs"]["x"], r["outputs"]["y"]


def _forward(r):
    """Returns F(X), float64 of X's shape ((N, k, d), or (k, d) for one sequence)."""
    _raise("forward", r)
    return r["outputs"]["output"]


def _import_attention(r):
    """Returns the Instance (from_torch makes one from a torch.nn.MultiheadAttention)."""
    _raise("import_attention", r)
    return r["outputs"]["output"]


def _stage1(r):
    """Returns (w_hat, standard_error, report): numpy arrays and the CLI's --report dict."""
    import numpy
    report = r["value"]
    if r["status"] == 4:
        raise ReferenceDisagreement(f"mhalearn.stage1: {r['error']}", [report["stages"][-1]], report=report)
    _raise("stage1", r, report)
    out = r["outputs"]["output"]
    return numpy.array(out["matrix"]), numpy.array(out["standard_error"]), report


def _sculpt(r):
    """Returns (body, report): the body K as the CLI's -o writes it (format mhalearn.body: dim, radius,
    slabs with a, b, eta) and the CLI's --report dict."""
    _raise("sculpt", r, r["value"])
    return r["outputs"]["output"], r["value"]


def _hard(r):
    """Returns (instance, report) with the CLI's --json report; with study=True the study's report."""
    _raise("hard", r, r["value"])
    if "study" in r["value"]:
        return r["value"]
    return r["outputs"].get("output"), r["value"]


def _study_wsum(r):
    """Returns the rows of the CLI's TSV as dicts."""
    _raise("study_wsum", r)
    return r["value"]


def _verify(r):
    """Returns the rows (as `mhalearn verify --json` prints them); raises ReferenceDisagreement
    (with every row attached) when one disagrees after escalation."""
    rows = r["value"]
    if r["status"] == 4:
        bad = _disagreeing(rows)
        raise ReferenceDisagreement(_first_disagreement("verify", bad), bad, all_rows=rows)
    _raise("verify", r, rows)
    return rows


def _first_disagreement(name, rows):
    """The CLI's one line: how many rows disagree, and what in the first one."""
    r = rows[0]
    where = f" (round {r['round']})" if "round" in r else ""
    return (f"mhalearn.{name}: a fast path disagrees with its reference beyond the derived bound (after escalation), {len(rows)} row(s); "
            f"first: stage {r['stage']}{where}: {r['disagreement']}")


def _learn(r):
    """Returns (learned Instance, report dict); the report has the CLI's --report keys plus "table",
    the CLI's printed table. With checkpoint=, a checkpoint is written at every safe point; Ctrl-C
    (KeyboardInterrupt) leaves the last one there, and resume= continues it to the bytes of a run
    never stopped."""
    layer, report = r["outputs"].get("output"), r["value"]
    if r["status"] == 4:
        bad = _disagreeing(report.get("reference", []))
        raise ReferenceDisagreement(_first_disagreement("learn", bad), bad, report=report, layer=layer)
    if r["status"] != 0:
        raise LearnFailed(f"mhalearn.learn: {r['error']}", report)
    return layer, report


def _demo(r):
    """Returns (report, text): the report as OUT/report.json holds it and the text the CLI prints.
    Writes instance.json, X.npy, Y.npy, learned.json and report.json into the folder `out`."""
    report = r["value"]
    if r["status"] == 4 and (report is None or "learn" not in report):  # the forward cross-check
        raise ReferenceDisagreement(f"mhalearn.demo: {r['error']}", [], report=report)
    if r["status"] == 4:
        bad = _disagreeing(report["learn"].get("reference", []))
        raise ReferenceDisagreement(_first_disagreement("demo", bad), bad, report=report)
    if r["status"] != 0:
        failed = LearnFailed if report is not None and "learn" in report else RunFailed
        raise failed(f"mhalearn.demo: {r['error']}", report)
    return report, r["text"]


generate = _command("generate", _generate)
check = _command("check", _check)
sample = _command("sample", _sample)
forward = _command("forward", _forward)
import_attention = _command("import_attention", _import_attention)
stage1 = _command("stage1", _stage1)
sculpt = _command("sculpt", _sculpt)
hard = _command("hard", _hard)
study_wsum = _command("study_wsum", _study_wsum)
verify = _command("verify", _verify)
learn = _command("learn", _learn)
demo = _command("demo", _demo)


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
        raise ValueError(f"mhalearn.from_torch: expected a torch.nn.MultiheadAttention, got {type(module).__name__}")
    if not module._qkv_same_embed_dim:
        raise ValueError("mhalearn.from_torch: kdim/vdim differ from embed_dim; only self-attention of one width is supported")
    if module.in_proj_bias is not None or module.out_proj.bias is not None:
        raise ValueError("mhalearn.from_torch: the module has biases; only bias=False attention maps onto the layer")
    if module.bias_k is not None or module.bias_v is not None:
        raise ValueError("mhalearn.from_torch: add_bias_kv=True adds a key/value token; not supported")
    if module.add_zero_attn:
        raise ValueError("mhalearn.from_torch: add_zero_attn=True adds a zero token; not supported")
    if module.training and module.dropout > 0:
        raise ValueError("mhalearn.from_torch: attention dropout is active; call module.eval() or use dropout=0")

    def weights(t):
        return t.detach().to(device="cpu", dtype=torch.float64).numpy()

    wq, wk, wv = weights(module.in_proj_weight).reshape(3, module.embed_dim, module.embed_dim)
    return import_attention(wq, wk, wv, weights(module.out_proj.weight), module.num_heads, k=k, inputs=inputs)
