"""The small-scale fine-tuning setting of Fu et al. 2023 (substitute 1): exact invariants."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.theory.stability._small_scale import (
    MethodHyper,
    TransferSetting,
    finetune,
    finetune_loo,
    pretrain,
    transfer_task_data,
)

SETTING = TransferSetting(n_source=200, n_train=16, n_test=100, hidden=(8,), features=4)
KW = dict(epochs=2, batch_size=8, learning_rate=1e-2)


@pytest.fixture(scope="module")
def task():
    data = transfer_task_data(jax.random.key(0), SETTING)
    encoder = pretrain(jax.random.key(1), data, SETTING, steps=5).encoder
    return data, encoder


def test_data_shapes_and_labels(task):
    data, _ = task
    assert data.x_train.shape == (16, SETTING.d) and data.y_source.shape == (200, 8)
    for y in (data.y_source, data.y_train, data.y_test):
        assert set(np.unique(np.asarray(y)).tolist()) == {-1.0, 1.0}


def test_zero_weights_make_no_update(task):
    data, encoder = task
    res = finetune(
        jax.random.key(2), encoder, data, jnp.zeros(16), MethodHyper(), SETTING, head_slots=1, **KW
    )
    jax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), res.encoder, encoder)


def test_loo_of_an_already_removed_point_is_zero(task):
    data, encoder = task
    weights = jnp.ones(16).at[3].set(0.0)
    res = finetune_loo(
        jax.random.key(3), encoder, data, weights, 3, MethodHyper(), SETTING, head_slots=1, **KW
    )
    assert float(res.loo_distance) == 0.0 and float(res.loo_head_normalized) == 0.0


def test_replicated_head_slots_equal_the_h_head_model(task):
    # 4 slots from 1 initialisation = one head (Adam cancels the 1/4 gradient scale up to ε)
    data, encoder = task
    one = finetune(jax.random.key(4), encoder, data, jnp.ones(16), MethodHyper(), SETTING,
                   head_slots=1, **KW)  # fmt: skip
    four = finetune(jax.random.key(4), encoder, data, jnp.ones(16), MethodHyper(heads=1),
                    SETTING, head_slots=4, **KW)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(one.test_accuracy), np.asarray(four.test_accuracy))
    np.testing.assert_allclose(np.asarray(four.head), np.asarray(one.head), rtol=1e-4, atol=1e-6)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6), four.encoder,
        one.encoder,
    )  # fmt: skip


def test_heads_must_divide_slots(task):
    data, encoder = task
    with pytest.raises(ValueError, match="must divide head_slots"):
        finetune(jax.random.key(5), encoder, data, jnp.ones(16), MethodHyper(heads=3), SETTING,
                 head_slots=4, **KW)  # fmt: skip


def test_head_tuning_freezes_the_encoder_exactly(task):
    data, encoder = task
    args = (jax.random.key(5), encoder, data, jnp.ones(16), MethodHyper(mixout_p=0.3), SETTING)
    frozen = finetune(*args, head_slots=1, tune_encoder=False, **KW)
    tuned = finetune(*args, head_slots=1, **KW)
    jax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), frozen.encoder, encoder)
    moved = jax.tree.map(lambda a, b: float(jnp.abs(a - b).max()), tuned.encoder, encoder)
    assert max(jax.tree.leaves(moved)) > 1e-4
    assert not np.allclose(np.asarray(frozen.head), np.asarray(tuned.head))
