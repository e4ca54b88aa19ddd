"""A child process that runs claims with one mutant at a time: :class:`ClaimServer`, the
parent's end of ``python -m ntsim.mutation._worker --serve``."""

from __future__ import annotations

import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping

from ntsim._jax_startup import CACHE_MIN_COMPILE_TIME_SECS
from ntsim.mutation._worker import ANSWER_PREFIX, CLAIM_PREFIX

__all__ = ["ClaimServer", "ask", "child_env"]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Kept units are keyed by the source on disk, which a mutant swapped in memory does not
    # change: a mutated simulation would read the original's units.
    env.pop("NTSIM_KEEP_UNITS", None)
    env.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=1")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("JAX_COMPILATION_CACHE_DIR", str(pathlib.Path.home() / ".cache/ntsim/jax"))
    env.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", CACHE_MIN_COMPILE_TIME_SECS)
    return env


class ClaimServer:
    """A child process that runs claims with one mutant at a time (``_worker --serve``).

    One server answers many specs (one JAX import); a spec that hangs past its timeout (or
    a claim past its own limit) or kills the process is answered ``{"timeout": True}`` or
    ``{"crash": ...}`` and the next spec starts a fresh process.
    """

    def __init__(self):
        self._process: subprocess.Popen | None = None
        self._stderr = None
        self._buffer = b""

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "ntsim.mutation._worker", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=child_env(),
        )
        self._buffer = b""

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return " | ".join(lines[-3:])

    def ask(
        self, spec: dict, timeout: float, claim_limits: Mapping[str, float] | None = None
    ) -> dict:
        """Send ``spec``; return the child's summary, or a timeout/crash marker.

        ``timeout`` bounds the whole answer; ``claim_limits`` (claim → seconds) bounds each
        claim from the moment the child names it (``CLAIM_PREFIX``), so a claim that hangs is
        stopped after its own limit, not the sum of all. A timeout's marker names the claim
        that was running (``"claim"``, None before the first) and every claim started
        (``"started"``, the running one last)."""
        if self._process is None or self._process.poll() is not None:
            self._start()
        try:
            self._process.stdin.write((json.dumps(spec) + "\n").encode())
            self._process.stdin.flush()
        except BrokenPipeError:
            tail = self._stderr_tail()
            self.close()
            return {"crash": tail, "claims": {}}
        deadline = time.monotonic() + timeout
        claim_deadline, started = deadline, []
        fd = self._process.stdout.fileno()
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                text = line.decode(errors="replace")
                if text.startswith(ANSWER_PREFIX):
                    return json.loads(text[len(ANSWER_PREFIX) :])
                if text.startswith(CLAIM_PREFIX):
                    started.append(text[len(CLAIM_PREFIX) :].strip())
                    limit = (claim_limits or {}).get(started[-1])
                    claim_deadline = deadline if limit is None else time.monotonic() + limit
                continue  # something else printed on stdout
            remaining = min(deadline, claim_deadline) - time.monotonic()
            if remaining <= 0:
                self.close()
                running = started[-1] if started else None
                return {"timeout": True, "claims": {}, "claim": running, "started": started}
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # the child died
                tail = self._stderr_tail()
                self.close()
                return {"crash": tail, "claims": {}}
            self._buffer += chunk

    def close(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                stream.close()
        if self._stderr is not None:
            self._stderr.close()
        self._process, self._stderr, self._buffer = None, None, b""

    def __enter__(self) -> ClaimServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def ask(
    server: ClaimServer | None,
    spec: dict,
    timeout: float,
    claim_limits: Mapping[str, float] | None = None,
) -> dict:
    """``server.ask``, or through a server of its own for this one spec."""
    if server is not None:
        return server.ask(spec, timeout, claim_limits)
    with ClaimServer() as own:
        return own.ask(spec, timeout, claim_limits)
