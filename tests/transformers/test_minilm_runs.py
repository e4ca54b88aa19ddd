"""The MiniLM stability experiment's bookkeeping: the tweet subsets and the run cache.

No fine-tuning here (that is ``make test-full``'s quick run): ``_run_method`` is replaced by
a stub whose accuracies encode which run was asked for, so each test checks which runs
``run`` computes, which it reuses, and where each sweep's numbers come from.
"""

from __future__ import annotations

import json
import os

import jax
import numpy as np
import pytest

from experiments.stability import minilm_stability
from ntsim.transformers import load_tokenizer

TINY = minilm_stability.Config(
    checkpoint="minilm-l3", train_size=16, test_size=8, max_length=8, seeds=2, epochs=2,
    batch_size=8, methods=("finetune", "mhloss"), heads=5, head_sweep=(1, 5),
    learning_rate_sweep=(1e-4,), fraction_sweep=(0.5,), evaluate_sweeps_every_epoch=False,
)  # fmt: skip


def test_tweet_subsets_keep_negative_and_positive_only(monkeypatch, key):
    """The experiment's split (``binary_sentiment_split``): tweets keep only the negative
    and positive texts, labelled 0/1, in disjoint train and test subsets."""
    from ntsim.transformers import _text_splits, binary_sentiment_split

    words = {0: "bad", 1: "okay", 2: "good"}
    texts = [f"{words[i % 3]} {i}" for i in range(60)]
    labels = np.arange(60) % 3
    monkeypatch.setattr(_text_splits, "load_text_dataset", lambda name: (texts, labels))
    train, test = binary_sentiment_split("tweets", key, train_size=24, test_size=16, max_length=6)
    tokenizer = load_tokenizer(6)
    seen = []
    for split, size in ((train, 24), (test, 16)):
        assert split["input_ids"].shape == (size, 6)
        pairs = zip(np.asarray(split["input_ids"]), np.asarray(split["label"]), strict=True)
        for ids, label in pairs:
            word, number = tokenizer.decode(ids.tolist()).split()
            assert word != "okay" and label == (word == "good")
            seen.append(int(number))
    assert len(set(seen)) == 40  # train and test disjoint; 40 of the 40 non-neutral texts
    with pytest.raises(ValueError, match="exceeds the 40 examples"):
        binary_sentiment_split("tweets", key, train_size=32, test_size=16, max_length=6)


def _stub(calls):
    """A ``_run_method`` recording each call; accuracy = 10·heads + 1e4·η + size, per seed."""

    def run_method(config, model_config, encoder0, data, test, method, settings, keys, k_surt,
                   learning_rate, every_epoch):  # fmt: skip
        heads = settings.heads if method == "mhloss" else 0
        size = len(data["label"])
        calls.append((method, heads, learning_rate, size, every_epoch))
        value = 10 * heads + 1e4 * learning_rate + size
        epochs = config.epochs if every_epoch else 1
        by_epoch = value + np.arange(len(keys))[:, None] + np.zeros((1, epochs))
        return by_epoch, np.full(len(keys), value)

    return run_method


def test_run_cache_computes_each_run_once_and_resumes(monkeypatch, tmp_path, key):
    calls = []
    monkeypatch.setattr(minilm_stability, "_run_method", _stub(calls))
    config = minilm_stability.Config(**{**TINY.__dict__, "run_cache": str(tmp_path)})
    results = minilm_stability.run(config, key)
    # the main runs every epoch; H = 1 is FineTune and H = 5 the main MHLoss run (reused);
    # η = 1e-4 and half the data are new, evaluated only at the end
    assert calls == [("finetune", 0, 5e-5, 16, True), ("mhloss", 5, 5e-5, 16, True),
                     ("finetune", 0, 1e-4, 16, False), ("finetune", 0, 5e-5, 8, False)]  # fmt: skip
    np.testing.assert_allclose(results["accuracy"]["finetune"], [16.5, 17.5])
    np.testing.assert_allclose(results["accuracy"]["mhloss"], [66.5, 67.5])
    assert results["head_sweep"] == {"1": results["accuracy"]["finetune"],
                                     "5": results["accuracy"]["mhloss"]}  # fmt: skip
    np.testing.assert_allclose(results["learning_rate_sweep"]["0.0001"], [17, 18])
    np.testing.assert_allclose(results["fraction_sweep"]["0.5"], [8.5, 9.5])
    assert len(os.listdir(tmp_path)) == 4

    calls.clear()  # a second call with the same cache computes nothing and agrees
    again = minilm_stability.run(config, key)
    assert calls == [] and again["accuracy"] == results["accuracy"]
    assert again["fraction_sweep"] == results["fraction_sweep"]

    # a different key or dataset subset is a different run: nothing is reused
    other = minilm_stability.run(config, jax.random.fold_in(key, 1))
    assert len(calls) == 4 and other["accuracy"] == results["accuracy"]
    assert len(os.listdir(tmp_path)) == 8


def test_a_run_evaluated_only_at_the_end_does_not_stand_in_for_a_main_run(
    monkeypatch, tmp_path, key
):
    calls = []
    monkeypatch.setattr(minilm_stability, "_run_method", _stub(calls))
    only_h1 = {"methods": ("mhloss",), "head_sweep": (1,), "learning_rate_sweep": (),
               "fraction_sweep": (), "run_cache": str(tmp_path)}  # fmt: skip
    config = minilm_stability.Config(**{**TINY.__dict__, **only_h1})
    minilm_stability.run(config, key)  # FineTune only as a sweep point: evaluated at the end
    assert calls == [("mhloss", 5, 5e-5, 16, True), ("finetune", 0, 5e-5, 16, False)]
    (saved,) = [f for f in os.listdir(tmp_path) if f.startswith("finetune")]
    with open(tmp_path / saved) as file:
        assert json.load(file)["every_epoch"] is False
    calls.clear()
    main = minilm_stability.Config(**{**config.__dict__, "methods": ("finetune",)})
    results = minilm_stability.run(main, key)  # the main run needs every epoch: recomputed
    assert calls == [("finetune", 0, 5e-5, 16, True)]
    assert np.asarray(results["accuracy_by_epoch"]["finetune"]).shape == (2, 2)
