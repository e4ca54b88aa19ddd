r"""Fused CPU kernel for full-batch GD of logistic heads (Fu et al. 2023, eq. (4)), via XLA's FFI.

XLA:CPU runs each head-tuning GD step as two matrix-vector-shaped products around ``2n``
sigmoids and cannot fuse margins → sigmoid → gradient into one pass over the data (see
``benchmarks/RESULTS.md``). :func:`logistic_gd_fused` runs the whole GD loop of a batch of
datasets in one call of a small C++ kernel (``csrc/logistic_gd.cc``): one pass over each
dataset's points per step, 16 points per vector, the ``k`` gradients accumulated in
registers, datasets spread over threads (``NTSIM_FUSED_THREADS`` overrides the count, which
is ``min(batch, hardware threads)`` by default).

The shared library is built lazily on first use with the system C++ compiler (``$CXX``, default
``g++``; ``-O3 -march=native``) into ``$NTSIM_CACHE`` (default ``~/.cache/ntsim/ext``), keyed by
a hash of the source, the flags, the compiler, the CPU and the jaxlib version, so a stale or
foreign build is never loaded; concurrent builders (pytest-xdist workers) serialise on a file
lock and the library appears by atomic rename. ``import ntsim`` compiles nothing.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import pathlib
import platform
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike

__all__ = ["FusedAvailability", "fused_logistic_available", "logistic_gd_fused"]

_SOURCE = pathlib.Path(__file__).with_name("csrc") / "logistic_gd.cc"
_TARGET = "ntsim_logistic_gd"
_SYMBOL = "NtsimLogisticGd"
# -ffp-contract=fast: a*b + c becomes one FMA (ISO C++ mode would otherwise keep them apart).
_FLAGS = ("-O3", "-march=native", "-ffp-contract=fast", "-shared", "-fPIC", "-std=c++17")
MAX_FEATURES = 64  # d + 1 <= 64 (the kernel pads the features to a compiled width)

_lock = threading.Lock()
_state: dict = {}  # "status": FusedAvailability once checked; "lib": the loaded library


@dataclass(frozen=True)
class FusedAvailability:
    """Whether :func:`logistic_gd_fused` can run here; truthy when it can, else ``reason``.

    ``build_failed``: a compiler and the CPU backend were there but the build or the load
    failed (a bug to report), as opposed to a machine that cannot build the kernel at all.
    """

    available: bool
    reason: str = ""
    build_failed: bool = False

    def __bool__(self) -> bool:
        return self.available


def _cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("NTSIM_CACHE", "~/.cache/ntsim/ext")).expanduser()


def _cpu_model() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                return line
    except OSError:
        pass
    return platform.processor()


def _build(compiler: str) -> pathlib.Path:
    """Compile the kernel unless a build with the same key exists; return the library path."""
    import jaxlib

    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True)
    parts = [_SOURCE.read_text(), " ".join(_FLAGS), version.stdout, _cpu_model(),
             platform.machine(), jaxlib.__version__]  # fmt: skip
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    where = _cache_dir()
    where.mkdir(parents=True, exist_ok=True)
    library = where / f"logistic_gd-{key}.so"
    if library.exists():
        return library
    with open(where / f"logistic_gd-{key}.lock", "w") as lock:
        try:  # serialise builders (pytest-xdist workers); the rename below is atomic anyway
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        if library.exists():
            return library
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=where)
        os.close(fd)
        try:
            cmd = [compiler, *_FLAGS, "-isystem", jax.ffi.include_dir(), str(_SOURCE), "-o", tmp]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
            os.replace(tmp, library)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return library


def fused_logistic_available() -> FusedAvailability:
    """Build (once per cache) and register the kernel; say whether it can run here, and why not.

    Unavailable when JAX's default backend is not the CPU, when there is no C++ compiler
    (``$CXX`` or ``g++``), or when the build fails (the compiler's message is the reason). The
    first call in a fresh cache compiles for a few seconds; later calls are free.

    Examples:
      >>> status = fused_logistic_available()
      >>> isinstance(status.available, bool)
      True
    """
    with _lock:
        if "status" in _state:
            return _state["status"]
        status = FusedAvailability(True)
        compiler = shutil.which(os.environ.get("CXX", "g++"))
        backend = jax.default_backend()
        if backend != "cpu":
            status = FusedAvailability(False, f"JAX's default backend is {backend!r}, not the CPU")
        elif compiler is None:
            status = FusedAvailability(False, f"no C++ compiler ({os.environ.get('CXX', 'g++')})")
        else:
            try:
                lib = ctypes.cdll.LoadLibrary(str(_build(compiler)))
                jax.ffi.register_ffi_target(
                    _TARGET, jax.ffi.pycapsule(getattr(lib, _SYMBOL)), platform="cpu"
                )
                _state["lib"] = lib  # keep the library loaded
            except (OSError, RuntimeError, subprocess.SubprocessError, AttributeError) as err:
                status = FusedAvailability(False, f"building the kernel failed: {err}", True)
        _state["status"] = status
        return status


def logistic_gd_fused(
    zt: ArrayLike, c: ArrayLike, w0: ArrayLike, eta: ArrayLike, num_steps: ArrayLike
) -> Array:
    r"""``num_steps`` full-batch GD steps of ``k`` logistic heads, one call (Fu et al. 2023, eq. 4).

    .. math::
        w_{k} \leftarrow w_{k} + \eta \sum_i c_{k,i}\, \sigma(-w_k^\top z_i)\, z_i,

    the GD step of the weighted logistic loss :math:`\sum_i c_{k,i} \log(1 + e^{-w_k^\top z_i})`
    with :math:`z_i = y_i \tilde x_i` — exactly the step of
    :func:`ntsim.theory.stability.head_tuning_gd` (``implementation="fused"`` calls this).
    Leading axes are a batch of independent datasets; works under ``jit``, ``vmap``,
    ``lax.map`` and ``lax.scan`` (``num_steps`` may be traced). Not differentiable. float32.

    Args:
      zt: ``(..., d + 1, n)`` the columns ``z_i = y_i [x_i; −1]`` (feature-major), ``d + 1 ≤ 64``.
      c: ``(..., k, n)`` per-head sample weights ``c_{k,i}``.
      w0: ``(..., k, d + 1)`` initial heads.
      eta: step size ``η``, a scalar or one per dataset (shape ``(...)``).
      num_steps: number of steps (int32), a scalar or one per dataset; ``0`` returns ``w0``.

    Returns:
      ``(..., k, d + 1)`` the heads after ``num_steps`` steps.

    Raises:
      RuntimeError: the kernel is unavailable here (the message names the reason, see
        :func:`fused_logistic_available`).
      ValueError: shapes or dtypes that do not match.
    """
    where = "logistic_gd_fused"
    zt, c, w0 = jnp.asarray(zt), jnp.asarray(c), jnp.asarray(w0)
    for name, arr in (("zt", zt), ("c", c), ("w0", w0)):
        if arr.dtype != jnp.float32:
            raise ValueError(f"{where}: {name} must be float32, got {arr.dtype}.")
        if arr.ndim < 2:
            raise ValueError(f"{where}: {name} must have at least 2 axes, got shape {arr.shape}.")
    batch, (d1, n), k = zt.shape[:-2], zt.shape[-2:], c.shape[-2]
    if not 1 <= d1 <= MAX_FEATURES:
        raise ValueError(f"{where}: zt must have 1 <= d + 1 <= {MAX_FEATURES} rows, got {d1}.")
    if c.shape != (*batch, k, n):
        raise ValueError(f"{where}: c must have shape (..., k, {n}) with the batch axes "
                         f"{batch} of zt, got {c.shape}.")  # fmt: skip
    if w0.shape != (*batch, k, d1):
        raise ValueError(f"{where}: w0 must have shape {(*batch, k, d1)}, got {w0.shape}.")
    eta, num_steps = jnp.asarray(eta), jnp.asarray(num_steps)
    if not jnp.issubdtype(num_steps.dtype, jnp.integer):
        raise ValueError(f"{where}: num_steps must be an integer, got {num_steps.dtype}.")
    for name, arr in (("eta", eta), ("num_steps", num_steps)):
        if arr.ndim and arr.shape != batch:
            raise ValueError(f"{where}: {name} must be a scalar or have shape {batch}, "
                             f"got {arr.shape}.")  # fmt: skip
    if not all(dim > 0 for dim in (*batch, n, k)):  # nothing to compute
        return w0
    status = fused_logistic_available()
    if not status:
        raise RuntimeError(f"{where}: the fused kernel is unavailable: {status.reason}. "
                           "Use the XLA implementation instead.")  # fmt: skip
    eta = jnp.broadcast_to(eta.astype(jnp.float32), batch)
    num_steps = jnp.broadcast_to(num_steps.astype(jnp.int32), batch)
    call = jax.ffi.ffi_call(
        _TARGET, jax.ShapeDtypeStruct(w0.shape, w0.dtype), vmap_method="broadcast_all"
    )
    return call(zt, c, w0, eta, num_steps)
