"""Run one pure function over many seeds, datasets or configs: chunked, sharded ``vmap``.

A sweep point is a pure function ``fn(instance) -> pytree``; the instances are the slices
along the leading axis ``K`` of a pytree ``inputs`` (keys from ``jax.random.split``, stacked
hyperparameters, stacked datasets). :func:`sweep` returns ``jax.vmap(fn)(inputs)`` computed

* in chunks of ``chunk_size`` instances (the last one padded by repeating the last instance,
  then cropped), so every chunk has the same shape — one compilation — and the peak memory
  of the computation is that of ``chunk_size`` instances;
* split across devices: each chunk (padded to a multiple of the device count) is cut into
  one slice per local device (or per entry of ``devices``), and each slice runs as an
  independent single-device program, all dispatched before any is awaited. This is
  data-parallel sharding without an SPMD program: instances are independent, so no
  collective is needed, and avoiding collectives avoids a CPU rendezvous deadlock when
  there are more (virtual) devices than cores. On a CPU the tests force 4 host devices with
  ``XLA_FLAGS=--xla_force_host_platform_device_count=4``;
* with a tqdm progress bar (stderr) updated between chunks.

Results equal the unchunked, unsharded ``jax.jit(jax.vmap(fn))(inputs)``. The stacked result
is gathered as one ``jax.Array`` per leaf (leading axis ``K``) on the first device.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from ntsim._types import PRNGKey, PyTree
from ntsim._validation import check_positive_int

__all__ = ["sweep", "sweep_keys"]


def _num_instances(where: str, inputs: PyTree) -> int:
    """The shared leading dimension ``K`` of all leaves of ``inputs``."""
    leaves, treedef = jax.tree.flatten(inputs)
    if not leaves:
        raise ValueError(f"{where}: inputs must contain at least one array, got {inputs!r}.")
    shapes = [jnp.shape(leaf) for leaf in leaves]
    sizes = {s[0] if s else None for s in shapes}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(
            f"{where}: every leaf of inputs must have the same leading (instance) axis K, got "
            f"leaf shapes {shapes} for structure {treedef}."
        )
    (k,) = sizes
    if k == 0:
        raise ValueError(f"{where}: inputs must hold at least one instance, got K=0.")
    return int(k)


def _chunk_runner(
    fn: Callable[[Any], PyTree], devices: Sequence[jax.Device] | None
) -> tuple[Callable[[PyTree], PyTree], int]:
    """Cached :func:`_build_chunk_runner`: sweeping the same ``fn`` again does not recompile."""
    return _build_chunk_runner(fn, None if devices is None else tuple(devices))


@functools.lru_cache(maxsize=32)  # holds references to the last 32 swept functions
def _build_chunk_runner(
    fn: Callable[[Any], PyTree], devices: tuple[jax.Device, ...] | None
) -> tuple[Callable[[PyTree], PyTree], int]:
    """``(run, num_devices)``: ``run(chunk)`` is jitted ``vmap(fn)`` split over ``devices``.

    With several devices the chunk's leading axis is cut into one equal slice per device,
    and each slice runs as its own single-device program (dispatched asynchronously, so the
    devices work at the same time); the outputs are gathered on the first device. There is
    no SPMD program and hence no cross-device collective: on a CPU with more (virtual)
    devices than cores, XLA's collective rendezvous can deadlock (seen with forced host
    devices on 2 cores), while independent programs cannot.
    """
    devices = list(jax.local_devices() if devices is None else devices)
    if not devices:
        raise ValueError("sweep: devices must name at least one device, got [].")
    jitted = jax.jit(jax.vmap(fn))
    if len(devices) == 1:
        return lambda chunk: jitted(jax.device_put(chunk, devices[0])), 1

    def run(chunk: PyTree) -> PyTree:
        outputs = _dispatch(chunk)
        gathered = [jax.device_put(out, devices[0]) for out in outputs]
        return jax.tree.map(lambda *leaves: jnp.concatenate(leaves), *gathered)

    def _dispatch(chunk: PyTree) -> list[PyTree]:
        size = jax.tree.leaves(chunk)[0].shape[0] // len(devices)
        return [
            jitted(
                jax.device_put(jax.tree.map(lambda a, i=i: a[i * size : (i + 1) * size], chunk), d)
            )
            for i, d in enumerate(devices)
        ]

    run.dispatch = _dispatch  # per-device outputs, for tests and diagnostics
    return run, len(devices)


def sweep(
    fn: Callable[[Any], PyTree],
    inputs: PyTree,
    *,
    chunk_size: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    progress: bool = False,
    description: str | None = None,
) -> PyTree:
    """``jax.vmap(fn)(inputs)``, computed in chunks, sharded over devices, with progress.

    Args:
      fn: pure function of ONE instance (a slice of ``inputs`` without its leading axis);
        it must be jittable and vmappable.
      inputs: pytree whose leaves share a leading axis of length ``K`` (the instances).
      chunk_size: instances per chunk (positive; default ``K``, one chunk). Peak memory
        scales with ``chunk_size``; each chunk is padded to a multiple of the device count.
      devices: devices to shard each chunk over; default all local devices
        (``jax.local_devices()``). One device means no sharding.
      progress: show a tqdm progress bar on stderr, updated after each chunk.
      description: label of the progress bar.

    Returns:
      ``fn``'s outputs stacked along a leading axis of length ``K``, equal to a Python loop
      ``[fn(instance_k) for k in range(K)]`` stacked.

    Raises:
      ValueError: if the leaves of ``inputs`` do not share a leading axis, ``K = 0``, or
        ``chunk_size`` is not a positive integer.

    Examples:
      >>> import jax.numpy as jnp
      >>> sweep(lambda h: h["a"] * h["b"], {"a": jnp.arange(5.0), "b": jnp.ones(5)},
      ...       chunk_size=2).tolist()
      [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    where = "sweep"
    k = _num_instances(where, inputs)
    chunk = k if chunk_size is None else min(check_positive_int(where, "chunk_size", chunk_size), k)
    run, num_devices = _chunk_runner(fn, devices)
    padded = math.ceil(chunk / num_devices) * num_devices
    outputs = []
    with tqdm(
        total=k, desc=description, unit="instance", file=sys.stderr, disable=not progress
    ) as bar:
        for start in range(0, k, chunk):
            stop = min(start + chunk, k)
            # Rows start..stop-1, padded by repeating the last instance (always a valid input).
            index = np.minimum(np.arange(start, start + padded), k - 1)
            out = run(jax.tree.map(lambda leaf, i=index: leaf[i], inputs))
            out = jax.block_until_ready(out)
            outputs.append(jax.tree.map(lambda leaf, n=stop - start: leaf[:n], out))
            bar.update(stop - start)
    if len(outputs) == 1:
        return outputs[0]
    return jax.tree.map(lambda *leaves: jnp.concatenate(leaves), *outputs)


def sweep_keys(
    fn: Callable[..., PyTree],
    key: PRNGKey,
    num: int,
    *,
    chunk_size: int | None = None,
    devices: Sequence[jax.Device] | None = None,
    progress: bool = False,
    description: str | None = None,
    **same: Any,
) -> PyTree:
    """``fn(key_k, **same)`` for ``num`` keys ``jax.random.split(key, num)``, via :func:`sweep`.

    ``same`` holds keyword arguments shared by every instance (closed over, so they may be
    static Python values); they cannot be named like this function's own keywords.

    Examples:
      >>> import jax
      >>> out = sweep_keys(lambda k, n: jax.random.normal(k, (n,)), jax.random.key(0), 3, n=2)
      >>> out.shape
      (3, 2)
    """
    num = check_positive_int("sweep_keys", "num", num)
    keys = jax.random.split(key, num)
    return sweep(
        lambda k: fn(k, **same),
        keys,
        chunk_size=chunk_size,
        devices=devices,
        progress=progress,
        description=description,
    )
