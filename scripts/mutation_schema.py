#!/usr/bin/env python3
"""Operator-based mutants of C++ sources as one *mutant schema* per file
(scripts/mutation_check.py drives it; docs/mutation.md records its runs).

Every mutation site is found from the exact expression ranges of libclang's AST
(Debian's python3-clang-14), not by regular expressions, and all the mutants of a
file are written into one copy of it: each site becomes

    (MHA_MUT(17) ? <mutant 17> : MHA_MUT(18) ? <mutant 18> : <original>)

so that the copy is compiled once and the mutant is chosen at run time by the
environment variable MHALEARN_MUTANT (none: the original program). Operators:

  relational-flip    <  <=  >  >=  one case moved (a <= b → a < b)
  relational-negate  a < b → a >= b, == ↔ !=, and `!(a <= b)` → `a > b`
                     (the rewrite that lets a NaN through)
  negation-dropped   !x → x
  logical-swap       && ↔ ||
  constant-x10       a literal times 10            (integers too)
  constant-x0.1      a literal times 0.1           (integers: divided by 10)
  term-dropped       a + b → a, b;  a − b → a;  a·b → a, b;  a/b → a;  x += y → x
  branch-swapped     an if's or a ?:'s condition negated (with an else: the
                     branches swapped)
  bool-flipped       true ↔ false
  loop-bound         a for loop's bound ± 1 (i < n → i < n + 1, i < n − 1)

Not mutated: headers (their constants are constant expressions across the tree),
constant-expression contexts (template arguments, array sizes, case labels,
default arguments), the arguments of format/snprintf/to_string (the detail text,
not a verdict), and expressions of class type (Eigen, MPFR: overloaded operators).
"""
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass, field

sys.path.append("/usr/lib/python3/dist-packages")  # Debian's python3-clang-14 under another interpreter
import clang.cindex as ci  # noqa: E402

RESOURCE_DIR = "/usr/lib/llvm-14/lib/clang/14.0.6"

HEADER = """// Mutant schema (scripts/mutation_schema.py): MHALEARN_MUTANT=<id> selects one mutant;
// MHALEARN_MUTANT_TRACE=<file> appends the ids of the sites this process reached to <file>
// at exit (the coverage that decides which tests can see a mutant).
#include <atomic>
#include <cstdio>
#include <cstdlib>
namespace mha_mutation {
constexpr long kMaxMutants = 1L << 16;
struct Trace {
  std::atomic<unsigned char> reached[kMaxMutants] = {};
  ~Trace() {
    const char* path = std::getenv("MHALEARN_MUTANT_TRACE");
    if (!path) return;
    if (std::FILE* f = std::fopen(path, "a")) {
      for (long i = 0; i < kMaxMutants; ++i)
        if (reached[i].load(std::memory_order_relaxed)) std::fprintf(f, "%ld\\n", i);
      std::fclose(f);
    }
  }
};
inline Trace& trace() {
  static Trace t;
  return t;
}
inline long mutant_id() {
  static const long id = [] {
    const char* s = std::getenv("MHALEARN_MUTANT");
    return s ? std::atol(s) : -1L;
  }();
  return id;
}
inline bool tracing() {
  static const bool on = std::getenv("MHALEARN_MUTANT_TRACE") != nullptr;
  return on;
}
inline bool selected(long n) {
  if (tracing() && n >= 0 && n < kMaxMutants) trace().reached[n].store(1, std::memory_order_relaxed);
  return mutant_id() == n;
}
}  // namespace mha_mutation
#define MHA_MUT(n) (mha_mutation::selected(n))
"""

ARITHMETIC = {ci.TypeKind.BOOL, ci.TypeKind.CHAR_S, ci.TypeKind.UCHAR, ci.TypeKind.SCHAR, ci.TypeKind.SHORT,
              ci.TypeKind.USHORT, ci.TypeKind.INT, ci.TypeKind.UINT, ci.TypeKind.LONG, ci.TypeKind.ULONG,
              ci.TypeKind.LONGLONG, ci.TypeKind.ULONGLONG, ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE,
              ci.TypeKind.LONGDOUBLE, ci.TypeKind.ENUM}
INTEGER = ARITHMETIC - {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE, ci.TypeKind.ENUM}
RELATIONAL = {"<": ("<=", ">="), "<=": ("<", ">"), ">": (">=", "<="), ">=": (">", "<")}
TEXT_CALLS = {"format", "snprintf", "to_string", "precision_name"}


@dataclass
class Mutant:
    id: int
    file: str
    line: int
    function: str
    operator: str
    original: str
    replacement: str
    key: str = ""


@dataclass
class Site:
    start: int
    end: int
    # (operator, description-of-replacement, render(sub) -> text); sub(a, b) renders a range
    mutations: list = field(default_factory=list)


def compile_args(compile_commands, path):
    entry = next(e for e in compile_commands if os.path.realpath(e["file"]) == os.path.realpath(path))
    args = shlex.split(entry["command"])[1:]
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-include"):
            skip = True
            continue
        if a == "-c" or a.endswith((".cpp", ".o")) or "pch" in a:
            continue
        out.append(a)
    return out + ["-resource-dir", RESOURCE_DIR], entry["directory"]


def kind_of(c):
    """The cursor's kind, or None for kinds this cindex.py does not name."""
    try:
        return c.kind
    except ValueError:
        return None


def canonical(t):
    return t.get_canonical().kind


def is_arithmetic(t):
    return canonical(t) in ARITHMETIC


def operator_token(cursor, lhs, text_of):
    """The operator's spelling: the source between the two operands, stripped."""
    children = list(cursor.get_children())
    if len(children) != 2:
        return None
    between = text_of(children[0].extent.end.offset, children[1].extent.start.offset).strip()
    return between if re.fullmatch(r"[<>=!&|+\-*/%^]+=?|&&|\|\|", between) else None


class Generator:
    def __init__(self, path, source, tu, first_id):
        self.path, self.source, self.tu = path, source, tu
        self.data = source.encode()
        self.sites = {}
        self.seen = set()
        self.next_id = first_id

    def text(self, a, b):
        return self.data[a:b].decode()

    def in_file(self, c):
        return c.location.file is not None and os.path.realpath(c.location.file.name) == os.path.realpath(self.path)

    def site(self, c):
        a, b = c.extent.start.offset, c.extent.end.offset
        return self.sites.setdefault((a, b), Site(a, b))

    def add(self, c, operator, render):
        self.site(c).mutations.append((operator, render))

    # -- the walk: parents are tracked to skip constant-expression and text contexts
    def walk(self, c, parents):
        children = list(c.get_children())
        if kind_of(c) == ci.CursorKind.CASE_STMT:
            children = children[1:]  # the label is a constant expression; the body is not
        for child in children:
            if kind_of(child) is None or child.kind in (ci.CursorKind.NAMESPACE_REF, ci.CursorKind.TEMPLATE_REF, ci.CursorKind.TYPE_REF):
                continue
            if not self.in_file(child) or self.skipped(child):
                continue
            where = (kind_of(child), child.extent.start.offset, child.extent.end.offset)
            if where not in self.seen:  # a node reached twice (implicit nodes share their child) mutated once
                self.seen.add(where)
                self.visit(child, parents)
            self.walk(child, parents + [child])

    def skipped(self, c):
        k = c.kind
        if k in (ci.CursorKind.STATIC_ASSERT, ci.CursorKind.PARM_DECL, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
                 ci.CursorKind.FIELD_DECL, ci.CursorKind.ENUM_DECL):
            return True
        if k == ci.CursorKind.CALL_EXPR and c.spelling in TEXT_CALLS:
            return True
        if k == ci.CursorKind.VAR_DECL and canonical(c.type) == ci.TypeKind.CONSTANTARRAY:
            return True
        return False

    def visit(self, c, parents):
        k = c.kind
        if k == ci.CursorKind.BINARY_OPERATOR:
            self.binary(c, parents)
        elif k == ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
            self.compound(c)
        elif k == ci.CursorKind.UNARY_OPERATOR:
            self.unary(c)
        elif k in (ci.CursorKind.INTEGER_LITERAL, ci.CursorKind.FLOATING_LITERAL):
            self.literal(c, parents)
        elif k == ci.CursorKind.CXX_BOOL_LITERAL_EXPR:
            self.boolean(c)
        elif k == ci.CursorKind.IF_STMT:
            self.branch(c)
        elif k == ci.CursorKind.CONDITIONAL_OPERATOR:
            self.conditional(c)
        elif k == ci.CursorKind.FOR_STMT:
            self.loop(c)

    def operands(self, c):
        ch = list(c.get_children())
        return ch if len(ch) == 2 else None

    def binary(self, c, parents):
        ops = self.operands(c)
        if not ops:
            return
        lhs, rhs = ops
        op = operator_token(c, lhs, self.text)
        if op is None:
            return
        la, lb, ra, rb = lhs.extent.start.offset, lhs.extent.end.offset, rhs.extent.start.offset, rhs.extent.end.offset
        both_arithmetic = is_arithmetic(lhs.type) and is_arithmetic(rhs.type)
        if op in RELATIONAL and both_arithmetic:
            flip, negate = RELATIONAL[op]
            self.add(c, "relational-flip", lambda s, o=flip: f"({s(la, lb)}) {o} ({s(ra, rb)})")
            self.add(c, "relational-negate", lambda s, o=negate: f"({s(la, lb)}) {o} ({s(ra, rb)})")
        elif op in ("==", "!=") and both_arithmetic:
            other = "!=" if op == "==" else "=="
            self.add(c, "relational-negate", lambda s, o=other: f"({s(la, lb)}) {o} ({s(ra, rb)})")
        elif op in ("&&", "||"):
            other = "||" if op == "&&" else "&&"
            self.add(c, "logical-swap", lambda s, o=other: f"({s(la, lb)}) {o} ({s(ra, rb)})")
        elif op in ("+", "-", "*", "/") and both_arithmetic and is_arithmetic(c.type):
            self.add(c, "term-dropped", lambda s: f"({s(la, lb)})")
            if op in ("+", "*"):
                self.add(c, "term-dropped", lambda s: f"({s(ra, rb)})")

    def compound(self, c):
        ops = self.operands(c)
        if not ops or not is_arithmetic(ops[0].type) or not is_arithmetic(ops[1].type):
            return
        lhs = ops[0]
        self.add(c, "term-dropped", lambda s: f"({s(lhs.extent.start.offset, lhs.extent.end.offset)})")

    def unary(self, c):
        toks = list(c.get_tokens())
        if not toks or toks[0].spelling != "!":
            return
        operand = next(iter(c.get_children()), None)
        if operand is None:
            return
        a, b = operand.extent.start.offset, operand.extent.end.offset
        self.add(c, "negation-dropped", lambda s: f"static_cast<bool>({s(a, b)})")
        inner = operand
        while inner.kind in (ci.CursorKind.PAREN_EXPR, ci.CursorKind.UNEXPOSED_EXPR):
            nxt = list(inner.get_children())
            if len(nxt) != 1:
                break
            inner = nxt[0]
        if inner.kind == ci.CursorKind.BINARY_OPERATOR:
            ops = self.operands(inner)
            op = operator_token(inner, ops[0], self.text) if ops else None
            if op in RELATIONAL and is_arithmetic(ops[0].type) and is_arithmetic(ops[1].type):
                opposite = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
                la, lb = ops[0].extent.start.offset, ops[0].extent.end.offset
                ra, rb = ops[1].extent.start.offset, ops[1].extent.end.offset
                self.add(c, "relational-negate",
                         lambda s, o=opposite: f"({s(la, lb)}) {o} ({s(ra, rb)})")

    def literal(self, c, parents):
        a, b = c.extent.start.offset, c.extent.end.offset
        spelled = self.text(a, b)
        if not re.fullmatch(r"[0-9][0-9a-fA-FxX.pP+\-']*[uUlLfF]*", spelled) or self.text(max(0, a - 1), a) == "[":
            return
        bare = re.sub(r"[uUlLfF]+$", "", spelled).replace("'", "")
        try:
            value = float.fromhex(bare) if bare.lower().startswith("0x") and "p" in bare.lower() else \
                int(bare, 0) if c.kind == ci.CursorKind.INTEGER_LITERAL else float(bare)
        except ValueError:
            return
        if value == 0:
            return
        integer = c.kind == ci.CursorKind.INTEGER_LITERAL
        self.add(c, "constant-x10", lambda s: f"({spelled} * 10)")
        self.add(c, "constant-x0.1", lambda s: f"({spelled} / 10)" if integer else f"({spelled} * 0.1)")

    def boolean(self, c):
        spelled = self.text(c.extent.start.offset, c.extent.end.offset)
        if spelled in ("true", "false"):
            self.add(c, "bool-flipped", lambda s, v="false" if spelled == "true" else "true": v)

    def condition_of(self, c):
        """The condition expression of an if (the first child that is an expression)."""
        for ch in c.get_children():
            if ch.kind.is_expression():
                return ch
            if ch.kind == ci.CursorKind.DECL_STMT or ch.kind == ci.CursorKind.VAR_DECL:
                return None
        return None

    def branch(self, c):
        cond = self.condition_of(c)
        if cond is None:
            return
        a, b = cond.extent.start.offset, cond.extent.end.offset
        has_else = len([ch for ch in c.get_children() if ch.kind.is_statement()]) >= 2
        site = self.sites.setdefault((a, b), Site(a, b))
        site.mutations.append(("branch-swapped", lambda s: f"!({s(a, b)})"))

    def conditional(self, c):
        ch = list(c.get_children())
        if len(ch) != 3:
            return
        cond = ch[0]
        a, b = cond.extent.start.offset, cond.extent.end.offset
        site = self.sites.setdefault((a, b), Site(a, b))
        site.mutations.append(("branch-swapped", lambda s: f"!({s(a, b)})"))

    def loop(self, c):
        ch = list(c.get_children())
        conds = [x for x in ch if x.kind == ci.CursorKind.BINARY_OPERATOR]
        if not conds:
            return
        cond = conds[0]
        ops = self.operands(cond)
        if not ops or operator_token(cond, ops[0], self.text) not in RELATIONAL:
            return
        rhs = ops[1]
        if canonical(rhs.type) not in INTEGER:
            return
        a, b = rhs.extent.start.offset, rhs.extent.end.offset
        site = self.sites.setdefault((a, b), Site(a, b))
        site.mutations.append(("loop-bound", lambda s: f"({s(a, b)}) + 1"))
        site.mutations.append(("loop-bound", lambda s: f"({s(a, b)}) - 1"))

    # -- rendering: sites nested inside a range rendered first (children), then the site's own mutants
    def render(self):
        sites = sorted((s for s in self.sites.values() if s.mutations), key=lambda s: (s.start, -s.end))
        self.sorted_sites = sites
        self.mutants = []
        body = self.render_range(0, len(self.data), None)
        return body

    def children_in(self, a, b, exclude):
        """The maximal sites inside [a, b), `exclude` left out."""
        out, last_end = [], a
        for s in self.sorted_sites:
            if s is exclude or s.start < a or s.end > b or s.start < last_end:
                continue
            out.append(s)
            last_end = s.end
        return out

    def render_range(self, a, b, exclude):
        pieces, pos = [], a
        for s in self.children_in(a, b, exclude):
            pieces.append(self.text(pos, s.start))
            pieces.append(self.render_site(s))
            pos = s.end
        pieces.append(self.text(pos, b))
        return "".join(pieces)

    def render_site(self, site):
        # A mutant's text uses the original text of the nested sites: only one mutant
        # is active at a time, so the nested ones are their originals whenever it is
        # (and the schema stays linear in the nesting depth).
        original = self.render_range(site.start, site.end, site)
        branches = []
        for operator, render in site.mutations:
            replacement = render(self.text)
            mid = self.next_id
            self.next_id += 1
            line = self.source[:site.start].count("\n") + 1
            self.mutants.append(Mutant(mid, self.path, line, self.function_at(site.start), operator,
                                       " ".join(self.text(site.start, site.end).split()), " ".join(replacement.split())))
            branches.append(f"MHA_MUT({mid}) ? ({replacement}) : ")
        if any(operator == "branch-swapped" for operator, _ in site.mutations):
            original = f"static_cast<bool>({original})"  # a condition: contextually bool anyway
        return "(" + "".join(branches) + "(" + original + "))"

    def function_at(self, offset):
        best = ""
        for f in self.functions:
            if f[0] <= offset < f[1]:
                best = f[2]
        return best


def generate(path, compile_commands, root, first_id):
    """(schema text, mutants) of one source file."""
    source = open(path, encoding="utf-8").read()
    args, directory = compile_args(compile_commands, path)
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        tu = ci.Index.create().parse(path, args=args)
    finally:
        os.chdir(cwd)
    errors = [str(d) for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise RuntimeError(f"{path}: libclang could not parse it: {errors[:3]}")
    g = Generator(path, source, tu, first_id)
    g.functions = [(c.extent.start.offset, c.extent.end.offset, c.spelling) for c in tu.cursor.walk_preorder()
                   if kind_of(c) in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.CXX_METHOD, ci.CursorKind.FUNCTION_TEMPLATE,
                                 ci.CursorKind.LAMBDA_EXPR) and g.in_file(c) and c.is_definition()]
    g.walk(tu.cursor, [])
    body = g.render()
    rel = os.path.relpath(path, root)
    counts = {}
    for m in g.mutants:
        m.file = rel
        base = f"{rel}|{m.function}|{m.operator}|{m.original}|{m.replacement}"
        counts[base] = counts.get(base, 0) + 1
        m.key = f"{base}|{counts[base]}"
    # `constexpr` → `const` where a mutated initialiser must be evaluated at run time.
    body = re.sub(r"\bconstexpr\b(?=\s+(?:double|long long|int|int64_t|unsigned|bool)\s+k\w+\s*=\s*\(MHA_MUT)",
                  "const", body)
    return HEADER + f'#line 1 "{rel}"\n' + body, g.mutants


if __name__ == "__main__":
    cc = json.load(open(sys.argv[1]))
    root = os.path.abspath(sys.argv[2])
    total = 0
    for p in sys.argv[3:]:
        text, mutants = generate(os.path.abspath(p), cc, root, total)
        total += len(mutants)
        print(p, len(mutants))
