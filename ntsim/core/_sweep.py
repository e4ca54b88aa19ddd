"""Run one pure function over many seeds, datasets or configs: chunked, sharded ``vmap``.

A sweep point is a pure function ``fn(instance) -> pytree``; the instances are the slices
along the leading axis ``K`` of a pytree ``inputs`` (keys from ``jax.random.split``, stacked
hyperparameters, stacked datasets). :func:`sweep` returns ``jax.vmap(fn)(inputs)`` computed

* in chunks of ``chunk_size`` instances (the last one padded by repeating the last instance,
  then cropped), so every chunk has the same shape — one compilation — and the peak memory
  of the computation is that of ``chunk_size`` instances;
* sharded across devices: each chunk's leading axis is split over a 1-D
  :class:`jax.sharding.Mesh` (axis name :data:`SWEEP_AXIS`) of all local devices (or
  ``devices``), padded to a multiple of the device count, under ``jax.jit``. On a CPU the
  tests force 4 host devices with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``;
* with a tqdm progress bar (stderr) updated between chunks.

Results equal the unchunked, unsharded ``jax.jit(jax.vmap(fn))(inputs)``. The stacked result
is gathered as one ``jax.Array`` per leaf (leading axis ``K``; replicated over the devices
when sharded).
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
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from tqdm.auto import tqdm

from ntsim._types import PRNGKey, PyTree
from ntsim._validation import check_positive_int

__all__ = ["SWEEP_AXIS", "sweep", "sweep_keys"]

#: Name of the mesh axis over which the instances of a sweep are sharded.
SWEEP_AXIS = "instances"


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
) -> tuple[Callable[[PyTree], PyTree], int, NamedSharding | None]:
    """Cached :func:`_build_chunk_runner`: sweeping the same ``fn`` again does not recompile."""
    return _build_chunk_runner(fn, None if devices is None else tuple(devices))


@functools.lru_cache(maxsize=32)  # holds references to the last 32 swept functions
def _build_chunk_runner(
    fn: Callable[[Any], PyTree], devices: tuple[jax.Device, ...] | None
) -> tuple[Callable[[PyTree], PyTree], int, NamedSharding | None]:
    """``(run, num_devices, sharding)``: ``run(chunk)`` is jitted ``vmap(fn)`` on ``devices``.

    With more than one device the chunk's leading axis is placed with
    ``NamedSharding(Mesh(devices, (SWEEP_AXIS,)), PartitionSpec(SWEEP_AXIS))`` and the output
    keeps that sharding, so each device computes its own slice of instances.
    """
    if devices is None:
        devices = jax.local_devices()
    devices = list(devices)
    if not devices:
        raise ValueError("sweep: devices must name at least one device, got [].")
    batched = jax.vmap(fn)
    if len(devices) == 1:
        device = devices[0]
        jitted = jax.jit(batched)
        return lambda chunk: jitted(jax.device_put(chunk, device)), 1, None
    mesh = Mesh(np.asarray(devices), (SWEEP_AXIS,))
    sharding = NamedSharding(mesh, PartitionSpec(SWEEP_AXIS))
    jitted = jax.jit(batched, out_shardings=sharding)
    return lambda chunk: jitted(jax.device_put(chunk, sharding)), len(devices), sharding


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
    run, num_devices, _ = _chunk_runner(fn, devices)
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
