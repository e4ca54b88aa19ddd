"""Separable two-class data: margin and radius are controlled, independently."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import hard_margin_svm, separable_dataset


@pytest.mark.parametrize(("margin", "radius", "offset"), [(0.05, 1.0, 0.0), (0.2, 3.0, 1.5)])
def test_margin_and_radius_hold_for_every_point(x64, key, margin, radius, offset):
    data = separable_dataset(key, 500, 6, margin=margin, radius=radius, offset=offset)
    norms = np.linalg.norm(data.x, axis=1)
    assert norms.max() <= radius * (1 + 1e-12)
    # The radius is attained (default perp_scale = radius makes clipping common).
    assert norms.max() >= radius * (1 - 1e-9)
    # The slab |uᵀ(x − c)| < γ around the centre is empty, with the classes on either side.
    signed = np.asarray(data.y * ((data.x - data.center) @ data.normal))
    assert signed.min() >= margin * (1 - 1e-12)
    np.testing.assert_allclose(np.linalg.norm(data.center), offset, atol=1e-12)
    assert set(np.unique(data.y).tolist()) == {-1.0, 1.0}


def test_svm_margin_is_at_least_and_close_to_gamma(x64, key):
    margins = []
    for j, gamma in enumerate((0.05, 0.1, 0.3)):
        data = separable_dataset(jax.random.fold_in(key, j), 2000, 5, margin=gamma, radius=2.0,
                                 offset=0.5)  # fmt: skip
        sol = hard_margin_svm(data.x, data.y, penalize_bias=False)
        assert float(sol.kkt_residual) <= 1e-8
        margins.append(float(sol.margin))
        # γ_S ≥ γ (the slab is empty); with n = 2000 the closest point lies within
        # spread·O(1/n) of the slab, so γ_S exceeds γ by a few percent at most.
        assert gamma * (1 - 1e-9) <= margins[-1] <= gamma * 1.1 + 0.01
    assert margins == sorted(margins)


def test_radius_does_not_change_margin(x64, key):
    # Independent control: the same γ at two radii gives SVM margins ≥ γ and max norms = B.
    for radius in (1.0, 4.0):
        data = separable_dataset(key, 1000, 4, margin=0.1, radius=radius, offset=0.2)
        sol = hard_margin_svm(data.x, data.y, penalize_bias=False)
        assert 0.1 <= float(sol.margin) <= 0.13
        np.testing.assert_allclose(np.linalg.norm(data.x, axis=1).max(), radius, rtol=1e-9)


def test_vmappable_over_keys_and_parameters(key):
    keys = jax.random.split(key, 4)
    gammas = jnp.array([0.1, 0.2, 0.3, 0.4])
    data = jax.jit(
        jax.vmap(lambda k, g: separable_dataset(k, 100, 3, margin=g, radius=1.0, offset=0.1))
    )(keys, gammas)
    assert data.x.shape == (4, 100, 3)
    signed = data.y * jnp.einsum("bnd,bd->bn", data.x - data.center[:, None], data.normal)
    assert np.all(np.asarray(signed.min(axis=1)) >= np.asarray(gammas) * (1 - 1e-6))


def test_input_validation(key):
    with pytest.raises(ValueError, match="offset \\+ margin < radius"):
        separable_dataset(key, 10, 3, margin=0.5, radius=1.0, offset=0.6)
    with pytest.raises(ValueError, match="dim"):
        separable_dataset(key, 10, 1, margin=0.1, radius=1.0)
    with pytest.raises(ValueError, match="margin"):
        separable_dataset(key, 10, 3, margin=-0.1, radius=1.0)
    with pytest.raises(ValueError, match="spread"):
        separable_dataset(key, 10, 3, margin=0.1, radius=1.0, spread=-1.0)
