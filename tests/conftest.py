"""Test-session settings shared by every test file.

Library code never touches ``jax_enable_x64``; tests that check identities to 1e-8 use the
scoped ``x64`` fixture (``jax.enable_x64`` context), so a failing test cannot leak the flag.
"""

from __future__ import annotations

import pathlib

import jax
import numpy as np
import pytest

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


@pytest.fixture
def x64():
    """Run the test body with float64 enabled, restored afterwards even on failure."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def key():
    """A fixed PRNG key (tests are deterministic)."""
    return jax.random.PRNGKey(20211206)


def load_fixture(name: str) -> dict[str, np.ndarray]:
    """Load ``tests/fixtures/<name>.npz`` written by ``make nt-fixtures`` (committed)."""
    path = FIXTURES / f"{name}.npz"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `make nt-fixtures` and commit it.")
    with np.load(path) as data:
        return dict(data)
