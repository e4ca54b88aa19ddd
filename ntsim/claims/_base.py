"""Contract v1 (legacy), kept while topics move to contract v2 (:mod:`._contract`).

The claim contract: a checkable statement of a paper and the result of checking it.

A :class:`Claim` is one statement (``id``, paper reference, one-line statement) plus a
pure ``check(key, scale) -> ClaimResult``. ``scale`` is ``"quick"`` (seconds; what the
test-suite runs) or ``"full"`` (the paper's sizes). A claim about a printed statement that
is false carries ``expect="refuted"``: its check reproduces the counterexample, and its
corrected twin carries ``expect="holds"``.

Results are built with :func:`compare`, which turns measured values and their reference
(a closed form, a bound, a Monte Carlo estimate) into per-instance *margins*: a margin
``>= 0`` means the instance satisfies the statement. The worst margin over all instances
is reported, so a reader sees how close a claim came to failing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ntsim._scales import SCALES
from ntsim._types import PRNGKey

__all__ = [
    "SCALES",
    "Claim",
    "ClaimResult",
    "cached_per_key",
    "combine_results",
    "compare",
    "vmap_instances",
]


Relation = Literal["equal", "upper_bound", "lower_bound"]


@dataclass(frozen=True)
class ClaimResult:
    """What a claim check measured.

    Attributes:
      holds: ``True`` when every instance satisfies the statement (all margins ``>= 0``).
      measured: the measured quantity over all instances (flattened array).
      reference: what ``measured`` was held against (closed form or bound), same shape.
      margins: per-instance slack; ``>= 0`` means the instance satisfies the statement.
      num_instances: number of independent random instances checked.
      notes: free text (tolerance justification, fitted slopes, counterexample details).
    """

    holds: bool
    measured: np.ndarray
    reference: np.ndarray
    margins: np.ndarray
    num_instances: int
    notes: str = ""

    @property
    def worst_margin(self) -> float:
        """The smallest per-instance margin (negative: the worst violation)."""
        return float(np.min(self.margins)) if self.margins.size else float("nan")

    def to_dict(self) -> dict:
        """JSON-ready summary (arrays summarised, not dumped)."""
        return {
            "holds": bool(self.holds),
            "num_instances": int(self.num_instances),
            "worst_margin": self.worst_margin,
            "measured_range": _range(self.measured),
            "reference_range": _range(self.reference),
            "notes": self.notes,
        }


def _range(values: np.ndarray) -> list[float]:
    values = np.asarray(values, dtype=float)
    return [float(values.min()), float(values.max())] if values.size else []


def compare(
    measured,
    reference,
    *,
    relation: Relation,
    rtol: float = 0.0,
    atol: float = 0.0,
    num_instances: int | None = None,
    notes: str = "",
) -> ClaimResult:
    """Build a :class:`ClaimResult` from measured values and their reference.

    Margins are

    * ``"equal"``: ``atol + rtol·|reference| − |measured − reference|``;
    * ``"upper_bound"`` (``measured <= reference``): ``reference − measured + atol``;
    * ``"lower_bound"`` (``measured >= reference``): ``measured − reference + atol``.

    Args:
      measured: measured values, any shape (flattened).
      reference: closed form / bound, broadcastable to ``measured``.
      relation: how ``measured`` must relate to ``reference``.
      rtol: relative tolerance (``"equal"`` only); justify it in ``notes``.
      atol: absolute tolerance (round-off slack).
      num_instances: independent instances (default: number of measured values).
      notes: free text recorded with the result.

    Examples:
      >>> r = compare([1.0, 2.0], [1.0, 2.5], relation="upper_bound")
      >>> r.holds, r.worst_margin
      (True, 0.0)
    """
    measured = np.asarray(measured, dtype=float)
    reference = np.broadcast_to(np.asarray(reference, dtype=float), measured.shape)
    if rtol < 0 or atol < 0:
        raise ValueError(f"compare: rtol and atol must be non-negative, got {rtol=}, {atol=}.")
    if relation == "equal":
        margins = atol + rtol * np.abs(reference) - np.abs(measured - reference)
    elif relation == "upper_bound":
        margins = reference - measured + atol
    elif relation == "lower_bound":
        margins = measured - reference + atol
    else:
        raise ValueError(
            f"compare: relation must be 'equal', 'upper_bound' or 'lower_bound', got {relation!r}."
        )
    margins = np.where(np.isnan(margins), -np.inf, margins)  # NaN never passes.
    return ClaimResult(
        holds=bool(np.all(margins >= 0)),
        measured=measured.ravel(),
        reference=np.asarray(reference).ravel(),
        margins=margins.ravel(),
        num_instances=int(measured.size if num_instances is None else num_instances),
        notes=notes,
    )


@dataclass(frozen=True)
class Claim:
    """One numerically checkable statement of a paper.

    Attributes:
      id: dotted id ``<topic>.<result>.<aspect>``, e.g. ``linear_teachers.thm4_1.closed_form``.
      paper: reference, e.g. ``"Shachaf et al. 2021, Thm 4.1, eq. (1)"``.
      statement: one line, in words and symbols.
      check: ``check(key, scale) -> ClaimResult``.
      expect: ``"holds"``, or ``"refuted"`` for a printed statement shown false.
      experiment: the experiment that reproduces the claim's figure, if any.
      key_id: name the claim's PRNG key is derived from (default: ``id``). Claims that read
        the same expensive simulation from different angles share a ``key_id``, so they get
        the same key and a cache inside their checks computes the runs once per process.
    """

    id: str
    paper: str
    statement: str
    check: Callable[[PRNGKey, str], ClaimResult] = field(repr=False)
    expect: Literal["holds", "refuted"] = "holds"
    experiment: str | None = None
    key_id: str | None = None

    def __post_init__(self):
        if self.expect not in ("holds", "refuted"):
            raise ValueError(f"Claim {self.id}: expect must be 'holds' or 'refuted'.")
        if self.id.count(".") < 2:
            raise ValueError(f"Claim id must be '<topic>.<result>.<aspect>', got {self.id!r}.")

    @property
    def topic(self) -> str:
        """The paper topic (first component of the id)."""
        return self.id.split(".", 1)[0]

    @property
    def key_name(self) -> str:
        """What :func:`ntsim.claims.claim_key` folds into the seed: ``key_id`` or ``id``."""
        return self.key_id or self.id


def combine_results(*results: ClaimResult, notes: str) -> ClaimResult:
    """Several :func:`compare` results of one claim as one: it holds when all of them hold.

    Measured values, references and margins are concatenated; ``num_instances`` is the
    largest of the parts (they check the same instances from different angles).
    """
    return ClaimResult(
        holds=all(r.holds for r in results),
        measured=np.concatenate([r.measured for r in results]),
        reference=np.concatenate([r.reference for r in results]),
        margins=np.concatenate([r.margins for r in results]),
        num_instances=max(r.num_instances for r in results),
        notes=notes,
    )


def vmap_instances(fn: Callable, instances, *, batch_size: int | None = None):
    """``fn`` vmapped (and jitted) over the leading axis of the pytree ``instances``.

    With ``batch_size``, ``lax.map`` runs vmapped batches of that many instances one after
    another (one compilation, memory bounded by the batch instead of all instances).

    jaxlib 0.10.x deadlocks when batched LAPACK calls (QR, SVD, eigh) run concurrently on
    the CPU thread pool; ntsim pins jaxlib < 0.10 for that reason (see pyproject.toml).
    """
    import jax

    if batch_size is None:
        return jax.jit(jax.vmap(fn))(instances)
    return jax.jit(lambda xs: jax.lax.map(fn, xs, batch_size=batch_size))(instances)


def cached_per_key(maxsize: int = 4) -> Callable[[Callable], Callable]:
    """Decorator: compute ``fn(key, *args)`` once per (key value, args) in a process.

    Claims that read the same runs share a ``key_id`` (see :class:`Claim`), so they receive
    equal keys; this cache makes the second claim reuse the first one's runs. JAX keys are
    not hashable, so the cache is keyed on the key's bits: ``fn`` receives the raw
    ``uint32`` key data as a JAX array (typed keys are unwrapped), which every
    ``jax.random`` function accepts. The other arguments must be hashable (scale names,
    flags). The wrapper exposes ``cache_clear``.

    Example:
      >>> import jax
      >>> calls = []
      >>> @cached_per_key(maxsize=2)
      ... def runs(key, scale):
      ...     calls.append(scale)
      ...     return float(jax.random.uniform(key))
      >>> runs(jax.random.PRNGKey(0), "quick") == runs(jax.random.PRNGKey(0), "quick")
      True
      >>> calls
      ['quick']
    """

    def decorate(fn: Callable) -> Callable:
        import jax

        @functools.lru_cache(maxsize=maxsize)
        def cached(key_data: tuple[int, ...], *args, **kwargs):
            return fn(jax.numpy.asarray(key_data, dtype=jax.numpy.uint32), *args, **kwargs)

        @functools.wraps(fn)
        def wrapper(key, *args, **kwargs):
            key = jax.numpy.asarray(key)
            if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
                key = jax.random.key_data(key)
            return cached(tuple(np.asarray(key).ravel().tolist()), *args, **kwargs)

        wrapper.cache_clear = cached.cache_clear
        return wrapper

    return decorate
