"""Search a theorem's instance space for its worst case: gradient ascent and random search.

A claim of kind bound or identity says ``lhs ≤ rhs`` on every instance of a domain. Random
draws test it where the draws fall; the worst case can be *searched for* when the instance
space is differentiable JAX. A :class:`SearchSpace` declares it: unconstrained parameter
arrays, a map onto the theorem's domain (unit vectors by normalisation, PSD matrices as
``AAᵀ``, …) and the two sides of the statement. :func:`falsify` maximises the log-ratio
``log(lhs/rhs)`` with Adam (optax) from ``restarts`` random starts at once (``vmap`` over
restarts, ``lax.scan`` over steps, one ``jit``); :func:`random_search` is the gradient-free
fallback for paths that are not differentiable. A ratio above 1 is a violation.

Constraints the theorem needs are part of the map wherever a map can express them. Those
that only a measurement can tell (a measured deviation ``ε < 0.9``) go in
``SearchSpace.feasible``: a step that would leave the feasible set is rejected (the iterate
stays where it was), so a constraint is never traded off against the objective the way a
penalty would be.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._checks import traced_checks_skipped
from ntsim._types import Array, PRNGKey

if TYPE_CHECKING:
    from ntsim.claims import ClaimResult

__all__ = ["SearchResult", "SearchSpace", "falsify", "random_search", "replay"]

Params = dict[str, Array]
Instance = dict[str, Array]


@dataclasses.dataclass(frozen=True)
class SearchSpace:
    """The instance space of one claim's statement ``lhs ≤ rhs``, for :func:`falsify`.

    Attributes:
      claim_id: the registered claim whose statement this searches.
      part: which part of the claim, when its statement has several (``""``: the whole).
      method: how ``ntsim falsify`` searches it by default: ``"adam"``, or ``"random"`` for
        a path reverse mode cannot differentiate (a ``while_loop`` with dynamic bounds).
      parameters: name → shape of the unconstrained arrays the search moves.
      to_instance: parameters → instance (a dict of arrays): the map onto the theorem's
        domain. Constraints with a closed-form map belong here, not in a penalty.
      sides: instance → ``(lhs, rhs)``, both positive scalars; the statement is
        ``lhs ≤ rhs`` (for an identity: ``(|error|, tolerance)``).
      description: the statement and the domain, in one or two lines.
      feasible: instance → boolean scalar, for constraints only a measurement can tell;
        steps that leave the set are rejected. ``None``: every instance is feasible.
      x64: search in float64 (identities and ratios near round-off need it).
      tolerance: a ratio up to ``1 + tolerance`` is the equality case reached to round-off,
        not a violation (the claim's own round-off tolerance; 0 for strict bounds).
      as_run: instance → the claim's simulation output for that one instance (the argument
        its ``check`` reads), so a found instance is replayed through the claim's own check
        (:func:`replay`). ``None``: the instance replays through ``sides`` only.
      replay_part: the path, through :attr:`~ntsim.claims.ClaimResult.parts`, to the part of
        the check's result that decides this space's statement (``()``: the whole result),
        so that a part of the check this space does not search cannot decide the replay.
    """

    claim_id: str
    parameters: Mapping[str, tuple[int, ...]]
    to_instance: Callable[[Params], Instance]
    sides: Callable[[Instance], tuple[Array, Array]]
    description: str
    feasible: Callable[[Instance], Array] | None = None
    x64: bool = True
    tolerance: float = 0.0
    part: str = ""
    method: str = "adam"
    as_run: Callable[[Instance], object] | None = None
    replay_part: tuple[int, ...] = ()

    def __post_init__(self):
        if self.method not in ("adam", "random"):
            raise ValueError(f"SearchSpace {self.claim_id}: method must be adam or random.")
        if not self.tolerance >= 0:
            raise ValueError(f"SearchSpace {self.claim_id}: tolerance must be >= 0.")
        if not self.parameters:
            raise ValueError(f"SearchSpace {self.claim_id}: declare at least one parameter.")
        for name, shape in self.parameters.items():
            if not all(isinstance(s, int) and s > 0 for s in shape):
                raise ValueError(
                    f"SearchSpace {self.claim_id}: parameter {name!r} needs a shape of "
                    f"positive ints, got {shape!r}."
                )

    @property
    def name(self) -> str:
        """``claim_id`` or ``claim_id:part``: the key of the space and of its saved files."""
        return f"{self.claim_id}:{self.part}" if self.part else self.claim_id

    def log_ratio(self, params: Params) -> tuple[Array, Array]:
        """``(log(lhs/rhs), feasible)`` at ``params``.

        A positive, finite ``lhs`` against an ``rhs`` that is not a positive number (``≤ 0``
        or NaN) is a violation, ratio ``+inf``: the bound fails to bound there. Any other
        non-finite value counts as infeasible (the step is rejected).
        """
        instance = self.to_instance(params)
        lhs, rhs = self.sides(instance)
        if jnp.shape(lhs) != () or jnp.shape(rhs) != ():
            raise ValueError(
                f"SearchSpace {self.name}: sides must return two scalars (lhs, rhs), got shapes "
                f"{jnp.shape(lhs)} and {jnp.shape(rhs)}; reduce a 'for every' statement to its "
                "worst element (e.g. the max of lhs/rhs)."
            )
        value = jnp.log(lhs) - jnp.log(rhs)
        rhs_broken = jnp.isfinite(lhs) & (lhs > 0) & ~(rhs > 0)
        value = jnp.where(rhs_broken, jnp.inf, value)
        ok = jnp.isfinite(value) | rhs_broken
        if self.feasible is not None:
            ok = ok & self.feasible(instance)
        return value, ok

    def draw(self, key: PRNGKey) -> Params:
        """Standard normal parameters: the random starts (and random search's draws)."""
        keys = jax.random.split(key, len(self.parameters))
        return {
            name: jax.random.normal(k, shape)
            for k, (name, shape) in zip(keys, self.parameters.items(), strict=True)
        }


class SearchResult(NamedTuple):
    """What one search found (ratios are ``lhs/rhs``: above 1 violates the statement).

    Attributes:
      claim_id: the space searched (:attr:`SearchSpace.name`).
      method: ``"adam"`` or ``"random"``.
      start_ratio: ``(restarts,)`` ratio at each random start (NaN where infeasible).
      best_ratio: ``(restarts,)`` largest feasible ratio each restart reached.
      history: ``(records, restarts)`` the current ratio every ``record_every`` steps.
      worst_params: the parameters of the largest ratio over all restarts.
      worst_instance: their instance (the theorem's domain), to replay and save.
      steps: steps per restart actually run (fewer when the budget ran out).
      seconds: wall time of the search, compilation included.
    """

    claim_id: str
    method: str
    start_ratio: np.ndarray
    best_ratio: np.ndarray
    history: np.ndarray
    worst_params: dict
    worst_instance: dict
    steps: int
    seconds: float

    @property
    def worst_ratio(self) -> float:
        """The largest feasible ``lhs/rhs`` found."""
        return float(np.nanmax(self.best_ratio))

    @property
    def start_worst_ratio(self) -> float:
        """The largest feasible ``lhs/rhs`` among the random starts."""
        return float(np.nanmax(self.start_ratio))


def _where(flag, new, old):
    return jax.tree.map(lambda a, b: jnp.where(flag, a, b), new, old)


def _chunk_fn(space: SearchSpace, optimizer, length: int):
    """``length`` Adam steps for every restart (vmapped), rejecting infeasible steps."""

    def one_step(carry, _):
        params, state, current, best_params, best = carry
        grad = jax.grad(lambda p: -space.log_ratio(p)[0])(params)
        updates, new_state = optimizer.update(grad, state, params)
        candidate = optax.apply_updates(params, updates)
        value, ok = space.log_ratio(candidate)
        params, state = _where(ok, candidate, params), _where(ok, new_state, state)
        current = jnp.where(ok, value, current)
        better = ok & (value > best)
        best_params = _where(better, candidate, best_params)
        best = jnp.where(better, value, best)
        return (params, state, current, best_params, best), current

    def chunk(carry):
        carry, trace = jax.lax.scan(one_step, carry, None, length=length)
        return carry, trace[-1]

    return jax.jit(jax.vmap(chunk))


def falsify(
    space: SearchSpace,
    key: PRNGKey,
    *,
    restarts: int = 32,
    steps: int = 500,
    learning_rate: float = 0.05,
    record_every: int = 25,
    budget_seconds: float | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> SearchResult:
    """Maximise ``lhs/rhs`` over ``space`` by Adam from ``restarts`` random starts.

    Args:
      space: the claim's instance space.
      key: PRNG key of the random starts.
      restarts: independent starts (vmapped).
      steps: Adam steps per start (in chunks of ``record_every``).
      learning_rate: Adam's step size on the unconstrained parameters.
      record_every: steps between the history's records (and budget checks).
      budget_seconds: stop after the chunk that passes this wall time (None: no limit).
      progress: called after every chunk with ``(steps done, worst ratio so far)``.

    Returns:
      A :class:`SearchResult`; a start that is infeasible keeps ratio NaN until a feasible
      step is found from it (starts are not redrawn).

    Examples:
      >>> space = SearchSpace(
      ...     "example", {"v": (2,)}, lambda p: {"v": p["v"] / jnp.linalg.norm(p["v"])},
      ...     lambda i: (jnp.abs(i["v"][0] * i["v"][1]), jnp.asarray(0.4)), "|v₁v₂| ≤ 0.4 on S¹")
      >>> result = falsify(space, jax.random.PRNGKey(0), restarts=4, steps=200)
      >>> round(result.worst_ratio, 3)  # max |v₁v₂| on the circle is 1/2
      1.25
    """
    for name, value in (("restarts", restarts), ("steps", steps), ("record_every", record_every)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"falsify: {name} must be a positive int, got {value!r}.")
    if not 0 < learning_rate < np.inf:
        raise ValueError(
            f"falsify: learning_rate must be positive and finite, got {learning_rate!r}."
        )
    if budget_seconds is not None and not 0 < budget_seconds < np.inf:
        raise ValueError(f"falsify: budget_seconds must be positive, got {budget_seconds!r}.")
    start = time.perf_counter()
    with jax.enable_x64(space.x64), traced_checks_skipped():  # NaN starts are dropped
        params = jax.vmap(space.draw)(jax.random.split(key, restarts))
        value, ok = jax.jit(jax.vmap(space.log_ratio))(params)
        best = jnp.where(ok, value, -jnp.inf)
        optimizer = optax.adam(learning_rate)
        carry = (params, jax.vmap(optimizer.init)(params), best, params, best)
        chunk = _chunk_fn(space, optimizer, record_every)
        history, done = [], 0
        while done < steps:
            carry, current = chunk(carry)
            done += record_every
            history.append(np.exp(np.asarray(current)))
            worst = float(np.exp(np.max(np.asarray(carry[4]))))
            if progress is not None:
                progress(done, worst)
            if budget_seconds is not None and time.perf_counter() - start > budget_seconds:
                break
        best_params, best = carry[3], np.asarray(carry[4])
        return _result(space, "adam", value, ok, best, best_params, np.stack(history), done,
                       time.perf_counter() - start)  # fmt: skip


def random_search(
    space: SearchSpace, key: PRNGKey, *, samples: int = 4096, batch: int = 512
) -> SearchResult:
    """The gradient-free fallback: the largest ratio over ``samples`` random draws.

    For claims whose path is not differentiable. Each draw is one "restart" of the result
    (``start_ratio == best_ratio``).

    Examples:
      >>> space = SearchSpace(
      ...     "example", {"v": (2,)}, lambda p: {"v": p["v"] / jnp.linalg.norm(p["v"])},
      ...     lambda i: (jnp.abs(i["v"][0] * i["v"][1]), jnp.asarray(0.4)), "|v₁v₂| ≤ 0.4 on S¹")
      >>> 1.2 < random_search(space, jax.random.PRNGKey(0), samples=2048).worst_ratio <= 1.25
      True
    """
    if not isinstance(samples, int) or samples < 1:
        raise ValueError(f"random_search: samples must be a positive int, got {samples!r}.")
    start = time.perf_counter()
    with jax.enable_x64(space.x64), traced_checks_skipped():  # NaN draws are dropped
        evaluate = jax.jit(jax.vmap(lambda k: space.log_ratio(space.draw(k))))
        keys = jax.random.split(key, samples)
        values, oks = [], []
        for i in range(0, samples, batch):
            v, o = evaluate(keys[i : i + batch])
            values.append(np.asarray(v))
            oks.append(np.asarray(o))
        value, ok = np.concatenate(values), np.concatenate(oks)
        best = np.where(ok, value, -np.inf)
        params = jax.vmap(space.draw)(keys)
        return _result(space, "random", value, ok, best, params, np.exp(best)[None], 0,
                       time.perf_counter() - start)  # fmt: skip


def _result(space, method, start_value, start_ok, best, best_params, history, steps, seconds):
    start_ratio = np.where(np.asarray(start_ok), np.exp(np.asarray(start_value)), np.nan)
    best = np.asarray(best)
    best_ratio = np.where(np.isnan(best) | np.isneginf(best), np.nan, np.exp(best))  # +inf kept
    if not np.any(np.isfinite(best_ratio)):
        raise ValueError(
            f"falsify {space.name}: no feasible instance was reached from any start: every "
            "ratio was non-finite or rejected by `feasible`. Check that `sides` returns two "
            "positive scalars (lhs > 0 and rhs > 0), that `to_instance` gives finite instances "
            "from standard normal parameters, and that `feasible` admits some of them."
        )
    worst = int(np.nanargmax(best_ratio))
    worst_params = jax.tree.map(lambda a: jnp.asarray(a[worst]), best_params)
    worst_instance = jax.tree.map(np.asarray, space.to_instance(worst_params))
    worst_params = jax.tree.map(np.asarray, worst_params)
    return SearchResult(space.name, method, start_ratio, best_ratio, history,
                        worst_params, worst_instance, steps, seconds)  # fmt: skip


def replay(space: SearchSpace, instance: Mapping[str, np.ndarray]) -> ClaimResult:
    """The claim's own ``check`` on one instance of ``space`` (a saved worst instance).

    Builds the claim's simulation output for ``instance`` with :attr:`SearchSpace.as_run` and
    runs the registered claim's ``check`` on it: the same decision ``ntsim verify`` makes on
    the simulation's draws, made on the instance the search found.

    Returns:
      The part :attr:`SearchSpace.replay_part` of the check's
      :class:`~ntsim.claims.ClaimResult` (``.outcome``: holds, refuted or inconclusive).
    """
    from ntsim.claims import get_claim

    if space.as_run is None:
        raise ValueError(f"replay {space.name}: the space declares no as_run.")
    with jax.enable_x64(space.x64):
        run = space.as_run({name: jnp.asarray(value) for name, value in instance.items()})
        result = get_claim(space.claim_id).check(run)
    for index in space.replay_part:
        result = result.parts[index]
    return result
