"""What the command line sets before JAX starts: the compilation cache and the compiler effort.

Compilation cache: quick-scale runs are dominated by XLA compilation, so the command line
turns on JAX's persistent compilation cache (``~/.cache/ntsim/jax``, or
``$NTSIM_JAX_CACHE``; ``NTSIM_JAX_CACHE=off`` disables it). A re-run — say after changing
one config field — recompiles only the programs that changed. Library code never sets it.
Every program is kept, however quick its compilation
(``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0``): a run compiles thousands of one-operation
programs as it dispatches eagerly (a split key, a sum of a new shape), each ~70 ms on these
CPUs against ~13 ms to load from the cache, and the processes of ``ntsim reproduce`` and the
test workers compile many of the same ones (measured: benchmarks/RESULTS.md).

Compiler effort: the command line also asks XLA's CPU backend for LLVM optimization level 1
(``--xla_backend_optimization_level=1`` in ``XLA_FLAGS``; ``$NTSIM_XLA_OPT_LEVEL`` picks
another level, ``NTSIM_XLA_OPT_LEVEL=default`` keeps XLA's own, and a level already in
``XLA_FLAGS`` wins). Measured on 2 CPU cores: quick experiments compile and run 25–45% faster
end to end, while the head-tuning sweep (elementwise-bound) and a MiniLM fine-tuning step
(matmul-bound) run as fast as at XLA's default level; level 0 compiles faster still but
makes the sweep 4× slower (benchmarks/RESULTS.md).

Both must run before JAX is imported (its settings are read from the environment then);
:func:`ntsim.cli.main` calls them first. Then, for the commands that compute,
:func:`start_jax` imports JAX and starts its backend with Ctrl-C deferred.
"""

from __future__ import annotations

import os
import pathlib
import sys

__all__ = [
    "CACHE_MIN_COMPILE_TIME_SECS",
    "configure_compilation_cache",
    "configure_compiler_effort",
    "start_jax",
    "xla_flags_with_opt_level",
]


#: Keep every compiled program in the persistent cache (module doc); the Makefile's test
#: environment sets the same value for pytest, which does not start through the CLI.
CACHE_MIN_COMPILE_TIME_SECS = "0"


def configure_compilation_cache() -> None:
    """Point JAX's persistent compilation cache at ``$NTSIM_JAX_CACHE`` (module doc).

    Must run before JAX is imported: the settings are read from the environment then. An
    explicit ``JAX_COMPILATION_CACHE_DIR`` wins. XLA logs every cache hit at ERROR level, so
    its C++ logging is limited to fatal messages while the cache is on (Python exceptions
    are unaffected).
    """
    where = os.environ.get("NTSIM_JAX_CACHE", str(pathlib.Path.home() / ".cache/ntsim/jax"))
    if where.lower() in ("off", "0", "none", ""):
        return
    cache = pathlib.Path(where)
    if "JAX_COMPILATION_CACHE_DIR" not in os.environ and cache.exists() and not cache.is_dir():
        raise ValueError(
            f"NTSIM_JAX_CACHE {where}: exists and is not a directory (JAX would run without "
            "its cache after one warning); give a directory, or NTSIM_JAX_CACHE=off"
        )
    if "jax" in sys.modules:
        return
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", where)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", CACHE_MIN_COMPILE_TIME_SECS)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def xla_flags_with_opt_level(flags: str, level: str) -> str:
    """``flags`` with ``--xla_backend_optimization_level=level`` appended (module doc).

    Unchanged when ``level`` is ``"default"`` or ``flags`` already sets the level.

    Examples:
      >>> xla_flags_with_opt_level("--xla_force_host_platform_device_count=4", "1")
      '--xla_force_host_platform_device_count=4 --xla_backend_optimization_level=1'
      >>> xla_flags_with_opt_level("--xla_backend_optimization_level=3", "1")
      '--xla_backend_optimization_level=3'
    """
    level = level.strip().lower()
    if level == "default" or "xla_backend_optimization_level" in flags:
        return flags
    if level not in ("0", "1", "2", "3"):
        raise ValueError(f"NTSIM_XLA_OPT_LEVEL must be 0-3 or 'default', got {level!r}.")
    return f"{flags} --xla_backend_optimization_level={level}".strip()


def configure_compiler_effort() -> None:
    """Set ``XLA_FLAGS`` from ``$NTSIM_XLA_OPT_LEVEL`` (default 1) before JAX starts."""
    if "jax" in sys.modules:  # too late: XLA has read its flags
        return
    flags = os.environ.get("XLA_FLAGS", "")
    new = xla_flags_with_opt_level(flags, os.environ.get("NTSIM_XLA_OPT_LEVEL", "1"))
    if new != flags:
        os.environ["XLA_FLAGS"] = new


def start_jax(*, backend: bool = True) -> None:
    """Import JAX and, with ``backend``, start its default backend (after the two settings
    above).

    The command line calls this inside :func:`ntsim._io.interrupts_deferred`, so a Ctrl-C
    in these seconds stops the command cleanly after them instead of interrupting the
    import of JAX's compiled extension, which crashed the process at exit. Commands that
    compute in worker processes (``reproduce``, ``mutate``) pass ``backend=False``: a
    parent that started a GPU backend would hold its memory while the workers need it.
    """
    import jax

    if backend:
        jax.devices()
