r"""Lemma A.5.1 where it is attained: isotropic quadratics, up to the largest step.

Fu et al. 2023, Lemma A.5.1 (the descent lemma) states, for a ``β``-smooth ``f`` and
``0 < η ≤ 1/β``,

    f(w − η∇f(w)) ≤ f(w) − (η/2)‖∇f(w)‖².

On random losses the right side has room to spare, so a right side made looser (``2f(w)``
for ``f(w)``: the losses are ``≥ 0``) still holds there. On the isotropic quadratics

    f(w) = (β/2)‖w − w_*‖² + c,   c ≥ 0,   r = ‖w − w_*‖,

both sides are known in closed form,

    lhs = c + (β/2)(1 − ηβ)² r²,   rhs = c + (β/2)(1 − ηβ) r²,

so ``rhs − lhs = (β/2)·ηβ(1 − ηβ)·r² ≥ 0``, which is 0 at ``η = 1/β``: there the lemma holds
with equality, and no constant larger than ``1/2`` in front of ``η‖∇f‖²`` (nor a smaller
multiple of ``f(w)``) survives. :func:`simulate_descent_attained` evaluates the library's
:func:`~ntsim.theory.stability.lemma_a5_1_sides` on such losses (half of them at
``η = 1/β``) and records what the closed forms need.

(A public submodule, not re-exported from :mod:`ntsim.theory.stability` yet: the package's
``__init__`` is on the source path of every stability claim, so exporting it re-hashes them
all. Export it when that topic is next re-recorded.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.theory.stability._full_finetuning import lemma_a5_1_sides, quadratic_loss

__all__ = ["DescentAttainedRun", "DescentAttainedSetting", "simulate_descent_attained"]


@dataclass(frozen=True)
class DescentAttainedSetting:
    """``instances`` losses in dimension ``d``: ``β`` log-uniform on ``[0.1, 10]``, ``w``
    and ``w_*`` standard normal, ``c ~ Exp(1)``; even instances at ``η = 1/β``, odd ones at
    ``η = u/β`` with ``u ~ U[0.05, 1]``."""

    instances: int = 1000
    d: int = 5

    def __post_init__(self):
        check_int_fields(self, ("instances", "d"))
        if self.instances < 2:
            raise ValueError(
                "DescentAttainedSetting.instances must be >= 2 (one at η = 1/β, one below), "
                f"got {self.instances}."
            )


class DescentAttainedRun(NamedTuple):
    """Per instance ``(instances,)``: the lemma's two sides (``lhs = f(w − η∇f(w))``,
    ``rhs = f(w) − (η/2)‖∇f(w)‖²``), and ``beta``, ``step`` (``η``), ``distance``
    (``r = ‖w − w_*‖``) and ``offset`` (``c``) of its loss."""

    lhs: jax.Array
    rhs: jax.Array
    beta: jax.Array
    step: jax.Array
    distance: jax.Array
    offset: jax.Array


def simulate_descent_attained(key: PRNGKey, setting: DescentAttainedSetting) -> DescentAttainedRun:
    """Both sides of Lemma A.5.1 on isotropic quadratics (module doc).

    Examples:
      >>> run = simulate_descent_attained(jax.random.PRNGKey(0), DescentAttainedSetting(4, 3))
      >>> bool(abs(run.lhs[0] - run.offset[0]) < 1e-5)  # η = 1/β lands on w_*: f = c
      True
    """
    check_setting_type("simulate_descent_attained", setting, DescentAttainedSetting)
    check_key("simulate_descent_attained", key)
    count, d = setting.instances, setting.d
    k_beta, k_w, k_star, k_c, k_u = jax.random.split(key, 5)
    beta = jnp.exp(jax.random.uniform(k_beta, (count,), minval=jnp.log(0.1), maxval=jnp.log(10)))
    w = jax.random.normal(k_w, (count, d))
    w_star = jax.random.normal(k_star, (count, d))
    offset = jax.random.exponential(k_c, (count,))
    fraction = jax.random.uniform(k_u, (count,), minval=0.05, maxval=1.0)
    step = jnp.where(jnp.arange(count) % 2 == 0, 1.0, fraction) / beta

    def sides(b, point, minimum, c, eta):
        def loss(v):
            return quadratic_loss(v, b * jnp.eye(d), minimum) + c

        return lemma_a5_1_sides(loss, point, eta)

    lemma = jax.vmap(sides)(beta, w, w_star, offset, step)
    distance = jnp.linalg.norm(w - w_star, axis=1)
    return DescentAttainedRun(lemma.lhs, lemma.rhs, beta, step, distance, offset)
