"""The mutation worker's poisoning checks: a failing traced check gives NaN, a passing one
the value itself, and the program has no host callback left (so JAX may cache it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim import _checks
from ntsim.mutation._poison import poisoning_checks


def _positive(x):
    return _checks.require_positive("f", "x", x) * 2.0


def _lowered(fn, *args) -> str:
    jax.clear_caches()
    return jax.jit(fn).lower(*args).as_text()


def test_a_failing_traced_check_poisons_and_a_passing_one_is_bit_identical():
    with poisoning_checks():
        jax.clear_caches()
        assert np.isnan(jax.jit(_positive)(-1.0))
        assert jax.jit(_positive)(1.5) == 3.0
        batched = jax.jit(jax.vmap(_positive))(jnp.array([1.0, -1.0]))
        assert np.isnan(batched).all()  # one flag per call, as the raising check
    jax.clear_caches()
    with pytest.raises(Exception, match="f: x must be positive"):
        jax.jit(_positive)(-1.0).block_until_ready()  # the raising check is back


def test_the_poisoning_program_has_no_host_callback_and_the_raising_one_has():
    """JAX skips its persistent cache for a program with host callbacks (compiler.py's
    cache write): the raising check's program has one, the poisoning one none."""
    raising = _lowered(_positive, 1.0)
    with poisoning_checks():
        poisoning = _lowered(_positive, 1.0)
    jax.clear_caches()
    assert "callback" in raising
    assert "callback" not in poisoning


def test_an_integer_value_keeps_the_raising_check():
    def pick(i):
        return jnp.arange(4.0)[_checks.require_index("f", "i", i, 4)]

    with poisoning_checks():
        assert "callback" in _lowered(pick, 1)
        with pytest.raises(Exception, match="f: i"):
            jax.jit(pick)(7).block_until_ready()
    jax.clear_caches()


def test_gradients_pass_through_the_poisoning_check():
    with poisoning_checks():
        jax.clear_caches()
        assert jax.grad(lambda x: _positive(x) ** 2)(1.5) == pytest.approx(12.0)
    jax.clear_caches()
