"""Output plumbing shared by experiments and claims: atomic writes, JSON, run metadata.

Every file ntsim writes goes through :func:`atomic_write_bytes` (temp file in the same
directory + ``os.replace``), so an interrupted run never leaves a half-written figure or
JSON behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import importlib.metadata
import io
import json
import os
import pathlib
import platform
import signal
import subprocess
import tempfile
import threading
from typing import Any

import numpy as np

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "catch_interrupts",
    "interrupt_requested",
    "interrupts_deferred",
    "git_commit",
    "run_metadata",
    "save_figure",
    "to_jsonable",
    "write_figure_and_record",
    "write_json",
]

_PACKAGES = ("ntsim", "jax", "jaxlib", "numpy", "optax", "diffrax", "matplotlib", "scikit-learn")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_INTERRUPTED = threading.Event()


def _in_gc_callback(frame, depth: int = 20) -> bool:
    """True when ``frame`` runs inside a garbage-collector callback (JAX's
    ``_xla_gc_callback``), where Python cannot raise: it prints "Exception ignored"."""
    while frame is not None and depth > 0:
        if frame.f_code.co_name == "_xla_gc_callback":
            return True
        frame, depth = frame.f_back, depth - 1
    return False


def _on_interrupt(signum, frame):
    _INTERRUPTED.set()
    if _in_gc_callback(frame):  # raising here is swallowed (with a traceback): ask again
        threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def catch_interrupts():
    """Make a Ctrl-C stick inside the block: remember it, then raise
    :class:`KeyboardInterrupt` as Python does; the previous handler is restored after.

    Python raises the interrupt wherever the main thread is; inside a garbage-collector
    callback (JAX registers one) it is printed as "Exception ignored" and lost, and the run
    went on to write its outputs and exit 0. With this handler installed (the command line
    does), the interrupt is also remembered: :func:`atomic_write_bytes` refuses to write
    after it, and the command line exits 130 even if the exception itself was swallowed.
    Off the main thread (where signals cannot be handled) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _INTERRUPTED.clear()
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _remember_interrupt(signum, frame):
    _INTERRUPTED.set()


@contextlib.contextmanager
def interrupts_deferred():
    """Inside the block a Ctrl-C is only remembered; it is raised on leaving the block.

    For code that must not be stopped half-way: a :class:`KeyboardInterrupt` raised while
    JAX's compiled extension is being imported or its CPU backend started left the process
    to crash at exit (a segmentation fault or an abort in 2 of 12 Ctrl-Cs timed to land
    there). Use it inside :func:`catch_interrupts`, which clears the remembered interrupt on
    entry. Off the main thread it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _remember_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def interrupt_requested() -> bool:
    """True after a Ctrl-C caught by :func:`catch_interrupts`."""
    return _INTERRUPTED.is_set()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> pathlib.Path:
    """Write ``data`` to ``path`` atomically (temp file in the same directory, then rename),
    readable as any new file is (``0o666`` less the umask), not only by its owner.

    Raises:
      KeyboardInterrupt: a Ctrl-C was caught (:func:`catch_interrupts`) and swallowed
        somewhere: an interrupted run writes nothing more.
    """
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs are for everyone
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> pathlib.Path:
    """UTF-8 text version of :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(obj: Any) -> Any:
    """Convert arrays, numpy scalars, dataclasses and tuples to plain JSON types."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (str, bool, int, type(None))):
        return obj
    array = np.asarray(obj)
    if array.ndim == 0 and array.dtype.kind == "f":
        value = float(array)  # non-finite scalars as strings ("nan", "inf"): readable anywhere
        return value if np.isfinite(value) else str(value)
    return array.tolist()  # non-finite array entries are written as NaN/Infinity


def read_json(path: str | os.PathLike) -> Any:
    """The JSON document at ``path``.

    Raises:
      ValueError: naming the file, when it is not readable JSON (a corrupt or hand-edited
        record), with what to do.
    """
    path = pathlib.Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(
            f"{path}: not readable JSON ({error}); restore it from git or move it away"
        ) from None


def write_json(path: str | os.PathLike, obj: Any) -> pathlib.Path:
    """Atomically write ``obj`` (made JSON-able by :func:`to_jsonable`) with indentation."""
    text = json.dumps(to_jsonable(obj), indent=1, allow_nan=True)
    return atomic_write_text(path, text + "\n")


def save_figure(figure, path: str | os.PathLike, *, dpi: int = 110) -> pathlib.Path:
    """Atomically save a matplotlib figure as PNG (small: committed figures stay light)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return atomic_write_bytes(path, buffer.getvalue())


def write_figure_and_record(
    figure,
    png_path: str | os.PathLike,
    json_path: str | os.PathLike,
    record: Any,
    *,
    dpi: int = 110,
) -> tuple[pathlib.Path, pathlib.Path]:
    """Write a figure's PNG and its JSON record as one unit, as far as a file system allows.

    Both payloads are made in memory first (a plotting or serialisation error writes
    nothing), then the PNG and last the JSON are renamed into place: a record on disk
    always has its PNG beside it. An interruption between the two renames can leave a PNG
    without its JSON; ``ntsim report`` names such orphans.
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    text = json.dumps(to_jsonable(record), indent=1, allow_nan=True) + "\n"
    png = atomic_write_bytes(png_path, buffer.getvalue())
    try:
        return png, atomic_write_text(json_path, text)
    except KeyboardInterrupt:  # between the two renames: take the PNG back
        pathlib.Path(png).unlink(missing_ok=True)
        raise


def git_commit(directory: str | os.PathLike | None = None) -> str:
    """The current git commit of ``directory`` (``"unknown"`` outside a repository)."""
    directory = pathlib.Path(directory or pathlib.Path(__file__).resolve().parent)
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def run_metadata() -> dict[str, Any]:
    """Versions, commit, devices and precision: what a reader needs to trust a number."""
    import jax  # local: keep `import ntsim._io` cheap

    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "versions": versions,
        "python": platform.python_version(),
        "git_commit": git_commit(),
        "devices": [str(d) for d in jax.devices()],
        "backend": jax.default_backend(),
        "x64": bool(jax.config.jax_enable_x64),
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
