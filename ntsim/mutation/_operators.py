"""Mutation operators: plausible one-token bugs in a function's source, made with :mod:`ast`.

A *site* is one node of a function's syntax tree that an operator can change, in a fixed
walk order, so that ``(module, function, site index)`` names a mutant reproducibly. A mutant
is the whole module's source with that one node replaced (:func:`mutate_module`); nothing
on disk is changed.

The operators are the bugs a careful reviewer of numerical research code still misses:

======================  ================================================================
``scale_x2``/``x0.5``   an additive term (an operand of ``+``/``-``) or a returned product
                        multiplied by 2 or by 1/2 (a lost or doubled constant)
``flip_sign``           ``a + b`` ↔ ``a - b`` (a sign error in one term)
``drop_term``           ``a + b`` → ``a`` and → ``b``; ``a - b`` → ``a`` (a dropped term)
``transpose``           one square-matrix operand of ``@`` transposed (last two axes; any
                        other operand is left alone: that mutant is equivalent, not an error)
``n_minus_one``         ``x / n`` → ``x / (n - 1)`` and ``x / (n - 1)`` → ``x / n`` for a
                        named (or ``len(...)``) divisor (a normaliser off by one)
``swap_args``           the first two name arguments of a call exchanged, where they have
                        the same shape and dtype (at run time; else left alone)
``min_max``             ``max`` ↔ ``min`` (builtins, ``jnp``/``np`` reductions and
                        elementwise ``maximum``/``minimum``, methods ``.max()``/``.min()``)
``compare``             ``<`` ↔ ``<=``, ``>`` ↔ ``>=``
======================  ================================================================
"""

from __future__ import annotations

import ast
import copy
import functools
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "OPERATORS",
    "Site",
    "function_sites",
    "guard_fires",
    "mutate_module",
    "same_kind",
    "transpose_fires",
]

OPERATORS: tuple[str, ...] = (
    "scale_x2",
    "scale_x0.5",
    "flip_sign",
    "drop_term",
    "transpose",
    "n_minus_one",
    "swap_args",
    "min_max",
    "compare",
)

_MIN_MAX = {
    "max": "min",
    "min": "max",
    "maximum": "minimum",
    "minimum": "maximum",
    "amax": "amin",
    "amin": "amax",
    "nanmax": "nanmin",
    "nanmin": "nanmax",
}
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


@dataclass(frozen=True)
class Site:
    """One mutation: ``operator`` applied at the ``index``-th site of ``function``.

    Attributes:
      function: the function's qualified name (``f`` at top level or ``Class.f``).
      operator: one of :data:`OPERATORS`.
      index: position among the function's sites (all operators, walk order).
      variant: which of the operator's alternatives at that node (e.g. drop left or right).
      line: the source line of the node (1-based, in the original module).
      before: the node's source.
      after: the mutated node's source (the run-time guards of ``transpose`` and
        ``swap_args`` shown as ``x.T`` and as the plain swap).
      end_line: the node's last source line (0: the same as ``line``).
      names: the names whose values decide the run-time guard: for ``swap_args`` the two
        names exchanged (their kinds), for ``transpose`` the transposed operand when it is a
        plain name (its shape); :func:`ntsim.mutation.executing_claims` reads the baseline's
        record of them.
    """

    function: str
    operator: str
    index: int
    variant: int
    line: int
    before: str
    after: str
    end_line: int = 0
    names: tuple[str, ...] = ()

    @property
    def lines(self) -> range:
        """The source lines the mutated node spans."""
        return range(self.line, max(self.line, self.end_line) + 1)

    def describe(self) -> str:
        """One line: ``function:line operator: before → after``."""
        return f"{self.function}:{self.line} {self.operator}: {_short(self.before)} → " + _short(
            self.after
        )


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: float) -> ast.expr:
    return ast.Constant(value)


def _scaled(node: ast.expr, factor: float) -> ast.expr:
    return ast.BinOp(left=_num(factor), op=ast.Mult(), right=node)


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


# A transpose only where it keeps the shape (a square matrix, last two axes), and a swap
# only of two arguments of the same shape and dtype (or type): otherwise the mutant is the
# original function (recognised as equivalent) rather than a shape error any run would show.
_TRANSPOSE_FIRES = "(lambda z: z.ndim >= 2 and z.shape[-1] == z.shape[-2])"
_TRANSPOSE = f"(lambda z: z.swapaxes(-1, -2) if {_TRANSPOSE_FIRES}(z) else z)"
_SAME_KIND = (
    "(lambda p, q: (getattr(p, 'shape', None), getattr(p, 'dtype', type(p)))"
    " == (getattr(q, 'shape', None), getattr(q, 'dtype', type(q))))"
)


_SAME_KIND_FN = eval(_SAME_KIND)  # the guard's own text: the probe and the mutant agree
_TRANSPOSE_FIRES_FN = eval(_TRANSPOSE_FIRES)


def transpose_fires(value: object) -> bool:
    """The run-time guard of ``transpose``: whether the operand is a square matrix in its last
    two axes, so transposing it keeps its shape (elsewhere the mutant is the original).

    Examples:
      >>> import numpy as np
      >>> transpose_fires(np.zeros((3, 3))), transpose_fires(np.zeros((2, 3)))
      (True, False)
      >>> transpose_fires(np.zeros((5, 4, 4))), transpose_fires(np.zeros(3))
      (True, False)
    """
    return bool(_TRANSPOSE_FIRES_FN(value))


def guard_fires(values: tuple) -> bool:
    """The guard of the mutant whose probe read ``values``: one operand (``transpose``,
    :func:`transpose_fires`) or two arguments (``swap_args``, :func:`same_kind`)."""
    return transpose_fires(*values) if len(values) == 1 else same_kind(*values)


def _transposed(node: ast.expr) -> ast.expr:
    return ast.Call(func=_expr(_TRANSPOSE), args=[node], keywords=[])


def same_kind(first: object, second: object) -> bool:
    """The run-time guard of ``swap_args``: whether two values have the same shape and dtype
    (or, without them, the same type), so exchanging them is a bug a run can show rather than
    a shape error.

    Examples:
      >>> import numpy as np
      >>> same_kind(np.zeros(3), np.ones(3)), same_kind(np.zeros(3), np.zeros(4))
      (True, False)
      >>> same_kind("where", np.zeros(3)), same_kind("a", "b")
      (False, True)
    """
    return bool(_SAME_KIND_FN(first, second))


def _swap_positions(node: ast.Call) -> tuple[int, int] | None:
    """Positions of the first two name arguments of a call, when they differ and no
    argument is starred (``swap_args`` exchanges them); else ``None``."""
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    names = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name)]
    if len(names) < 2 or node.args[names[0]].id == node.args[names[1]].id:
        return None
    return names[0], names[1]


def _swapped(first: ast.expr, second: ast.expr) -> tuple[ast.expr, ast.expr]:
    same = ast.Call(
        func=_expr(_SAME_KIND), args=[copy.deepcopy(first), copy.deepcopy(second)], keywords=[]
    )
    return (
        ast.IfExp(test=same, body=copy.deepcopy(second), orelse=copy.deepcopy(first)),
        ast.IfExp(
            test=copy.deepcopy(same), body=copy.deepcopy(first), orelse=copy.deepcopy(second)
        ),
    )


def _is_count(node: ast.expr) -> bool:
    """A divisor that reads as a count: a name, an attribute, or ``len(...)``."""
    if isinstance(node, ast.Name | ast.Attribute):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"


def _minus_one(node: ast.expr) -> ast.expr | None:
    if _is_count(node):
        return ast.BinOp(left=node, op=ast.Sub(), right=_num(1))
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
        and _is_count(node.left)
    ):
        return node.left
    return None


def _is_term_of_return(node: ast.AST, parent: ast.AST | None) -> bool:
    return (
        isinstance(parent, ast.Return)
        and isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult | ast.Div | ast.MatMult)
    )


def _is_int_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_sequence(node: ast.AST) -> bool:
    """A tuple or list by its syntax (``x.shape``, ``x.shape[:-1]``, a literal, a
    comprehension): ``2.0 * x.shape`` is a type error, not a formula bug."""
    if isinstance(node, ast.List | ast.Tuple | ast.ListComp):
        return True
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and _is_sequence(node.value)
    )


def _alternatives(
    node: ast.AST, parent: ast.AST | None
) -> Iterator[tuple[str, ast.AST, ast.AST | None]]:
    """(operator, replacement, how to show it or None) for every mutation of ``node``, in a
    fixed order. The replacements of transpose and swap carry run-time guards; they are
    shown as a reader would write the bug (``x.T``, the plain swap)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        for side in ("left", "right"):
            term = getattr(node, side)
            if _is_int_literal(term) or _is_sequence(term):  # i + 1 → i + 2.0, 2.0 * x.shape:
                continue  # a type error, not a formula bug
            for name, factor in (("scale_x2", 2.0), ("scale_x0.5", 0.5)):
                mutant = copy.copy(node)
                setattr(mutant, side, _scaled(term, factor))
                yield name, mutant, None
        if not (_is_sequence(node.left) or _is_sequence(node.right)):  # tuple − tuple
            mutant = copy.copy(node)
            mutant.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            yield "flip_sign", mutant, None
        yield "drop_term", node.left, None
        if isinstance(node.op, ast.Add):
            yield "drop_term", node.right, None
    elif _is_term_of_return(node, parent):
        yield "scale_x2", _scaled(node, 2.0), None
        yield "scale_x0.5", _scaled(node, 0.5), None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        for side in ("left", "right"):
            mutant, shown = copy.copy(node), copy.copy(node)
            setattr(mutant, side, _transposed(getattr(node, side)))
            setattr(shown, side, ast.Attribute(value=getattr(node, side), attr="T", ctx=ast.Load()))
            yield "transpose", mutant, shown
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        divisor = _minus_one(node.right)
        if divisor is not None:
            mutant = copy.copy(node)
            mutant.right = divisor
            yield "n_minus_one", mutant, None
    if isinstance(node, ast.Call):
        swapped = _swap_positions(node)
        if swapped is not None:
            first, second = swapped
            mutant, shown = copy.copy(node), copy.copy(node)
            mutant.args, shown.args = list(node.args), list(node.args)
            mutant.args[first], mutant.args[second] = _swapped(node.args[first], node.args[second])
            shown.args[first], shown.args[second] = node.args[second], node.args[first]
            yield "swap_args", mutant, shown
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in _MIN_MAX and (isinstance(func, ast.Attribute) or name in ("max", "min")):
            mutant = copy.copy(node)
            mutant.func = copy.copy(func)
            if isinstance(func, ast.Name):
                mutant.func.id = _MIN_MAX[name]
            else:
                mutant.func.attr = _MIN_MAX[name]
            yield "min_max", mutant, None
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            partner = _COMPARE.get(type(op))
            if partner is not None:
                mutant = copy.copy(node)
                mutant.ops = list(node.ops)
                mutant.ops[position] = partner()
                yield "compare", mutant, None


def _function_node(tree: ast.Module, function: str) -> ast.FunctionDef:
    """The ``def`` of ``function``: a top-level name ``f`` or a method ``Class.f``."""
    *owner, name = function.split(".")
    body = tree.body
    if owner:
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == owner[0]]
        body = classes[0].body if len(owner) == 1 and classes else []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    raise ValueError(f"No function {function!r} (top level or Class.method) in this module.")


def _walk_with_parents(root: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None, str, int | None]]:
    """(node, parent, field, position) in a fixed pre-order, skipping docstrings and the
    decorators, defaults and annotations of the function itself."""
    stack: list[tuple[ast.AST, ast.AST | None, str, int | None]] = []
    for position, statement in enumerate(root.body):
        stack.append((statement, root, "body", position))
    stack.reverse()
    while stack:
        node, parent, field_name, position = stack.pop()
        is_docstring = (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if is_docstring:
            continue
        yield node, parent, field_name, position
        children = []
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "decorator_list", "type_comment"):
                continue
            if isinstance(value, list):
                children.extend(
                    (item, node, name, i)
                    for i, item in enumerate(value)
                    if isinstance(item, ast.AST)
                )
            elif isinstance(value, ast.AST):
                children.append((value, node, name, None))
        stack.extend(reversed(children))


@functools.lru_cache(maxsize=32)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


def _probe_names(operator: str, node: ast.AST, shown, unprobed: set[int] | None) -> tuple:
    """The names whose values decide a mutant's run-time guard, for the baseline's probe: the
    two arguments a swap exchanges, or the operand a transpose transposes when it is a plain
    name; ``()`` (no probe: the mutant always runs) for other operators, for an operand that
    is an expression, and on a line :func:`_unprobed_lines` excludes."""
    if unprobed is None or node.lineno in unprobed:
        return ()
    if operator == "swap_args":
        first, second = _swap_positions(node)
        return node.args[first].id, node.args[second].id
    if operator == "transpose":
        side = next(getattr(shown, s) for s in ("left", "right")
                    if isinstance(getattr(shown, s), ast.Attribute)
                    and getattr(shown, s) is not getattr(node, s))  # fmt: skip
        return (side.value.id,) if isinstance(side.value, ast.Name) else ()
    return ()


#: Names the swap guard reads (``getattr``, ``type``); a function that may rebind them, or
#: change a value's shape in place, gets no probes.
_GUARD_BUILTINS = frozenset({"getattr", "type"})
_IN_PLACE_SHAPE = frozenset({"resize", "shape", "dtype"})


def _header_end(statement: ast.stmt | ast.ExceptHandler) -> int:
    """Last line of a compound statement's header (a simple statement: its last line)."""
    body = getattr(statement, "body", None)
    if isinstance(body, list) and body and body[0].lineno > statement.lineno:
        return body[0].lineno - 1
    return statement.lineno if body else (statement.end_lineno or statement.lineno)


def _unprobed_lines(root: ast.AST, module: ast.Module) -> set[int] | None:
    """Lines of ``root`` where a probe read at the line event could miss what the call reads:
    lines two statements (or a compound statement's header and its body, or an ``except``
    clause and its body) share, so one may rebind a name before the call. ``None``: no line
    of the function is probed — it holds ``:=``, ``global`` or ``nonlocal``, may rebind
    ``getattr``/``type``, or may change a shape in place (``.resize``, ``.shape =``)."""
    for node in ast.walk(root):
        if isinstance(node, ast.NamedExpr | ast.Global | ast.Nonlocal):
            return None
        if (
            isinstance(node, ast.Name)
            and node.id in _GUARD_BUILTINS
            and not isinstance(node.ctx, ast.Load)
        ):
            return None
        if isinstance(node, ast.arg) and node.arg in _GUARD_BUILTINS:
            return None
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _IN_PLACE_SHAPE
            and (node.attr == "resize" or not isinstance(node.ctx, ast.Load))
        ):
            return None
    for node in module.body:
        bound = (
            [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            + [a.asname or a.name for a in getattr(node, "names", []) if isinstance(a, ast.alias)]
            + [getattr(node, "name", "")]
        )
        if _GUARD_BUILTINS & set(bound):
            return None
    spans = []
    for node in ast.walk(root):
        if isinstance(node, ast.stmt | ast.ExceptHandler) and node is not root:
            spans.append((node.lineno, _header_end(node)))
    counts: dict[int, int] = {}
    for first, last in spans:
        for line in range(first, last + 1):
            counts[line] = counts.get(line, 0) + 1
    return {line for line, count in counts.items() if count > 1}


def function_sites(source: str, function: str) -> list[Site]:
    """Every mutation of ``function`` (a top-level ``def`` in module ``source``).

    Examples:
      >>> src = "def mean_gap(a, b, n):\\n    return (a - b) / n\\n"
      >>> for site in function_sites(src, "mean_gap"):
      ...     print(site.describe())
      mean_gap:2 scale_x2: (a - b) / n → 2.0 * ((a - b) / n)
      mean_gap:2 scale_x0.5: (a - b) / n → 0.5 * ((a - b) / n)
      mean_gap:2 n_minus_one: (a - b) / n → (a - b) / (n - 1)
      mean_gap:2 scale_x2: a - b → 2.0 * a - b
      mean_gap:2 scale_x0.5: a - b → 0.5 * a - b
      mean_gap:2 scale_x2: a - b → a - 2.0 * b
      mean_gap:2 scale_x0.5: a - b → a - 0.5 * b
      mean_gap:2 flip_sign: a - b → a + b
      mean_gap:2 drop_term: a - b → a
    """
    module = _parsed(source)
    root = _function_node(module, function)  # read only: mutants are copies
    unprobed = _unprobed_lines(root, module)
    sites = []
    for node, parent, _, _ in _walk_with_parents(root):
        before = None
        for variant, (operator, mutant, shown) in enumerate(_alternatives(node, parent)):
            before = before or ast.unparse(node)
            sites.append(
                Site(
                    function=function,
                    operator=operator,
                    index=len(sites),
                    variant=variant,
                    line=getattr(node, "lineno", root.lineno),
                    end_line=getattr(node, "end_lineno", None) or 0,
                    before=before,
                    after=ast.unparse(mutant if shown is None else shown),
                    names=_probe_names(operator, node, shown, unprobed),
                )
            )
    return sites


def mutate_module(source: str, site: Site) -> str:
    """The module ``source`` with ``site`` applied (``ast.unparse``: comments are lost,
    semantics are kept).

    Examples:
      >>> src = "def gap(a, b):\\n    return a - b\\n"
      >>> site = [s for s in function_sites(src, "gap") if s.operator == "flip_sign"][0]
      >>> namespace = {}
      >>> exec(mutate_module(src, site), namespace)
      >>> namespace["gap"](3.0, 1.0)
      4.0
    """
    return ast.unparse(mutate_tree(source, site)) + "\n"


def mutate_tree(source: str, site: Site) -> ast.Module:
    """The module ``source`` with ``site`` applied, as a tree whose nodes keep the source's
    line numbers (the mutant's own nodes take the line of the node they replace): compiled,
    its tracebacks name the lines of the file on disk.

    Examples:
      >>> src = "x = 1\\n\\n\\ndef gap(a, b):\\n    return a - b\\n"
      >>> site = [s for s in function_sites(src, "gap") if s.operator == "flip_sign"][0]
      >>> tree = mutate_tree(src, site)
      >>> tree.body[1].body[0].value.lineno, ast.unparse(tree.body[1].body[0])
      (5, 'return a + b')
    """
    tree = ast.parse(source)
    root = _function_node(tree, site.function)
    count = 0
    for node, parent, field_name, position in _walk_with_parents(root):
        alternatives = list(_alternatives(node, parent))
        if count + len(alternatives) <= site.index:
            count += len(alternatives)
            continue
        operator, replacement, _ = alternatives[site.index - count]
        if operator != site.operator or ast.unparse(node) != site.before:
            raise ValueError(f"Site {site.describe()} does not match this source.")
        ast.copy_location(replacement, node)
        if position is None:
            setattr(parent, field_name, replacement)
        else:
            getattr(parent, field_name)[position] = replacement
        return ast.fix_missing_locations(tree)
    raise ValueError(f"Site {site.describe()} is past the last site of {site.function!r}.")
