"""``ntsim.run_cache``: finished units kept on disk, named by a digest of the setting
and key, so a resumed run reads only its own units."""

from __future__ import annotations

import dataclasses

import jax
import pytest

from ntsim.run_cache import disk_memo, setting_of


@dataclasses.dataclass(frozen=True)
class Setting:
    size: int = 3


@dataclasses.dataclass(frozen=True)
class CachedSetting(Setting):
    run_cache: str = ""


def _counting():
    calls = []

    def compute():
        calls.append(1)
        return {"value": [len(calls), 0.1 + 0.2]}

    return compute, calls


def test_empty_folder_computes_every_time():
    compute, calls = _counting()
    memo = disk_memo("", Setting(), jax.random.PRNGKey(0))
    assert memo("a", compute) == {"value": [1, 0.1 + 0.2]}
    assert memo("a", compute) == {"value": [2, 0.1 + 0.2]}


def test_a_kept_unit_is_read_back_exactly_and_only_for_its_setting_and_key(tmp_path):
    folder = str(tmp_path / "runs")
    compute, calls = _counting()
    first = disk_memo(folder, Setting(), jax.random.PRNGKey(0))("a", compute)
    again = disk_memo(folder, Setting(), jax.random.PRNGKey(0))("a", compute)
    assert again == first and len(calls) == 1  # read back, float bits included
    assert not [p for p in (tmp_path / "runs").iterdir() if p.suffix == ".tmp"]
    disk_memo(folder, Setting(size=4), jax.random.PRNGKey(0))("a", compute)
    disk_memo(folder, Setting(), jax.random.PRNGKey(1))("a", compute)
    disk_memo(folder, Setting(), jax.random.PRNGKey(0))("b", compute)
    assert len(calls) == 4


def test_setting_of_drops_the_experiments_own_fields(tmp_path):
    config = CachedSetting(size=5, run_cache=str(tmp_path))
    assert setting_of(config, Setting) == Setting(size=5)
    with pytest.raises(TypeError, match="dataclass"):
        setting_of(config, object)
