r"""The MiniLM setting of the real-checkpoint tests of Sun & Raskutti 2026 (Sec 7 on MiniLM).

The paper's Sec 7 fine-tunes GPT-Neo with a scalar head; here the shipped MiniLM sentence
encoders (``minilm-l3``, ``minilm-l6``) play that role. The model is

.. math:: f(θ, x) = wᵀ\,\bar h_{θ_E}(x) + b, \qquad θ = (θ_E, w, b),

the encoder's masked mean-pooled output ``\bar h`` (dropout off) read out by one linear
head ``w ~ N(0, I/d)``, ``b = 0`` drawn from the run's key; ``θ_PT`` is the pretrained
encoder with that head. Labels are ``y ∈ {−1, +1}`` and training is full-batch GD on
``(1/2N) Σ_i (f(θ, x_i) − y_i)²``, the loss and dynamics of Secs 3.3–3.5 (eq. (5):
``K = 𝕂/N`` with ``𝕂 = Θ = J Jᵀ``, the NTK of all parameters at ``θ_PT``).

Tasks (:data:`MINILM_TASKS`), all from the text data shipped with the project:

* ``"rotten_tomatoes"`` — review snippets, fresh (+1) vs rotten (−1);
* ``"tweets"`` — tweets, positive (+1) vs negative (−1), neutral ones left out;
* ``"long_sentence"`` — the Rotten Tomatoes snippets again, labelled by their own length:
  +1 when the snippet has more whitespace-separated words than the corpus median. A task
  whose label is a property of the input alone, unrelated to sentiment.

Flax is imported only inside the functions (``import ntsim`` never imports it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, Params, PRNGKey

__all__ = [
    "MINILM_TASKS",
    "MiniLMScalarModel",
    "PowerIteration",
    "draw_task_splits",
    "minilm_scalar_model",
    "squared_gradient_norms",
    "task_corpus",
    "top_ntk_eigenvalue",
]

#: The fine-tuning tasks built from the shipped text data (module doc).
MINILM_TASKS = ("rotten_tomatoes", "tweets", "long_sentence")


@functools.lru_cache(maxsize=4)
def task_corpus(task: str) -> tuple[tuple[str, ...], np.ndarray]:
    """``(texts, labels ±1)`` of one task over its whole corpus (module doc).

    Raises:
      ValueError: an unknown task.
    """
    if task not in MINILM_TASKS:
        raise ValueError(f"task_corpus: task must be one of {MINILM_TASKS}, got {task!r}.")
    from ntsim.transformers import load_text_dataset

    source = "tweets" if task == "tweets" else "rotten_tomatoes"
    texts, labels = load_text_dataset(source)
    labels = np.asarray(labels)
    if task == "tweets":  # negative (0) vs positive (2); neutral (1) left out
        keep = labels != 1
        texts = [t for t, k in zip(texts, keep, strict=True) if k]
        labels = labels[keep] == 2
    elif task == "long_sentence":
        words = np.array([len(t.split()) for t in texts])
        labels = words > np.median(words)
    return tuple(texts), np.where(np.asarray(labels, bool), 1.0, -1.0).astype(np.float32)


def draw_task_splits(
    key: PRNGKey, task: str, sizes: tuple[int, ...], max_length: int
) -> list[dict[str, Array]]:
    """Disjoint random splits of a task's corpus, tokenised: one batch per entry of ``sizes``.

    Each batch is ``{"input_ids", "attention_mask": (n, max_length) int32, "y": (n,) ±1}``.

    Raises:
      ValueError: ``sum(sizes)`` exceeds the corpus.
    """
    from ntsim.transformers import load_tokenizer, tokenize

    texts, labels = task_corpus(task)
    if sum(sizes) > len(texts):
        raise ValueError(
            f"draw_task_splits: the splits need {sum(sizes)} examples, {task!r} has {len(texts)}."
        )
    order = np.asarray(jax.random.permutation(key, len(texts)))
    tokenizer = load_tokenizer(max_length)
    out, start = [], 0
    for size in sizes:
        index = order[start : start + size]
        start += size
        tokens = tokenize(tokenizer, [texts[i] for i in index])
        out.append(
            {
                "input_ids": jnp.asarray(tokens["input_ids"]),
                "attention_mask": jnp.asarray(tokens["attention_mask"]),
                "y": jnp.asarray(labels[index]),
            }
        )
    return out


class MiniLMScalarModel(NamedTuple):
    """A MiniLM encoder with a scalar head (module doc).

    Attributes:
      params: ``θ_PT = {"encoder": pretrained, "head": {"kernel": (d, 1), "bias": (1,)}}``.
      score: ``score(params, batch) -> (n,)``: ``f(θ, x)`` on a batch, dropout off.
      ntk: ``ntk(params, batch1, batch2=None) -> (n1, n2)``: the empirical NTK ``Θ`` w.r.t.
        ALL parameters, through :func:`ntsim.transformers.subset_ntk_fn` with an all-True
        mask, streamed in ``ntk_batch``-sentence tiles with the structured rule.
      num_params: the number of parameters.
    """

    params: Params
    score: Callable[[Params, dict], Array]
    ntk: Callable[..., Array]
    num_params: int


@functools.lru_cache(maxsize=2)
def _checkpoint(name: str):
    from ntsim.transformers import load_pretrained

    return load_pretrained(name)


@functools.lru_cache(maxsize=4)
def _compiled_functions(checkpoint: str, ntk_batch: int):
    """``score`` and ``ntk`` of one checkpoint, built once per process so that every seed's
    head reuses the same compiled programs (the head is an argument, not a constant)."""
    from ntsim.transformers import init_heads, param_mask, pooled_features, subset_ntk_fn

    config, encoder = _checkpoint(checkpoint)

    def score(p: Params, batch: dict) -> Array:
        features = pooled_features(config, p["encoder"], batch)
        return (features @ p["head"]["kernel"] + p["head"]["bias"])[:, 0]

    def one_example(p: Params, example: Array) -> Array:  # (2T,) ids then mask -> (1,)
        length = example.shape[0] // 2
        batch = {"input_ids": example[None, :length], "attention_mask": example[None, length:]}
        return score(p, batch)

    like = {"encoder": encoder, "head": init_heads(jax.random.PRNGKey(0), config.hidden_size, 1)}
    ntk_fn = subset_ntk_fn(
        one_example, param_mask(like, "*"), batch_size=ntk_batch, implementation="structured"
    )

    def stacked(batch: dict) -> Array:
        return jnp.concatenate([batch["input_ids"], batch["attention_mask"]], axis=1)

    def ntk(p: Params, batch1: dict, batch2: dict | None = None) -> Array:
        return ntk_fn(stacked(batch1), None if batch2 is None else stacked(batch2), p)

    return jax.jit(score), ntk


def minilm_scalar_model(checkpoint: str, key: PRNGKey, *, ntk_batch: int = 16) -> MiniLMScalarModel:
    """``θ_PT`` (the checkpoint with a head drawn from ``key``), ``f`` and its NTK.

    Args:
      checkpoint: ``"minilm-l3"`` or ``"minilm-l6"``.
      key: draws the head ``w ~ N(0, I/d)``.
      ntk_batch: sentences per NTK tile (memory holds two tiles' Jacobian pieces).
    """
    from ntsim.transformers import count_params, init_heads

    config, encoder = _checkpoint(checkpoint)
    params = {"encoder": encoder, "head": init_heads(key, config.hidden_size, 1)}
    score, ntk = _compiled_functions(checkpoint, ntk_batch)
    return MiniLMScalarModel(params, score, ntk, count_params(params))


#: Entries per float32 partial sum of :func:`_squared_norm_partials` (module-level so the
#: tests can read it): a sum of 64 squares is within ``64·ε₃₂ ≈ 4e-6`` of exact, relatively.
SQUARED_NORM_BLOCK = 64


def _squared_norm_partials(tree) -> Array:
    """``Σ‖leaf‖²`` as float32 partial sums of :data:`SQUARED_NORM_BLOCK` squares each
    (traced: call it inside a jitted function), to be summed in float64 on the host.

    Why partials: a jitted float32 ``vdot`` over a 590k-entry weight is rewritten into one
    running sum and loses about 1% (seen on MiniLM-L3); a reduction over the last axis of a
    ``(k, 64)`` array cannot be, as its output has ``k`` entries. Only the ``k ≈ P/64``
    partials cross to the host, not the ``P`` gradient entries in float64 (which took most
    of the decay simulation's time at quick scale).
    """
    pieces = []
    for leaf in jax.tree.leaves(tree):
        flat = jnp.ravel(leaf)
        flat = jnp.pad(flat, (0, -flat.size % SQUARED_NORM_BLOCK))
        pieces.append(jnp.sum(jnp.square(flat.reshape(-1, SQUARED_NORM_BLOCK)), axis=1))
    return jnp.concatenate(pieces)


def _sum64(partials: Array) -> float:
    """The host-side float64 sum of :func:`_squared_norm_partials`."""
    return float(np.sum(np.asarray(partials, np.float64)))


@functools.lru_cache(maxsize=4)
def _gradient_program(score: Callable[[Params, dict], Array]) -> Callable:
    def sentence_squared_norm(params: Params, ids: Array, mask: Array) -> Array:
        def sentence_score(p: Params) -> Array:
            return score(p, {"input_ids": ids[None], "attention_mask": mask[None]})[0]

        return _squared_norm_partials(jax.grad(sentence_score)(params))

    return jax.jit(sentence_squared_norm)


def squared_gradient_norms(model: MiniLMScalarModel, batch: dict) -> np.ndarray:
    """``‖∇_θ f(θ_PT, x_i)‖²`` over ALL parameters, one sentence at a time: ``(n,)`` float64.

    ``Θ_ii = ‖∇_θ f(x_i)‖²`` (``Θ = JJᵀ``, eq. (5)), so ``Σ_i`` of these is ``tr Θ``. They
    come from plain reverse-mode gradients of ``model.score`` on a batch of one sentence, a
    route that shares nothing with ``model.ntk`` (the structured, tiled NTK rule) but the
    network itself; the decay claims use it to check the spectrum they fit. The squares are
    summed in float32 blocks of 64 and the blocks in float64 on the host
    (:func:`_squared_norm_partials`).
    """
    program = _gradient_program(model.score)
    ids, mask = np.asarray(batch["input_ids"]), np.asarray(batch["attention_mask"])
    return np.asarray([_sum64(program(model.params, ids[i], mask[i])) for i in range(len(ids))])


class PowerIteration(NamedTuple):
    """The top eigenvalue of ``Θ = JJᵀ`` by power iteration on Jacobian products.

    Attributes:
      eigenvalue: the Rayleigh quotient ``‖Jᵀu‖²`` at the last unit vector ``u`` (of ``Θ``,
        not ``Θ/N``).
      residual: ``‖Θu − λu‖/λ``. For a symmetric ``Θ`` some eigenvalue lies within
        ``residual·λ`` of ``λ`` (Bauer–Fike; the Rayleigh quotient is even within
        ``residual²λ²/gap``), and power iteration from a start with a component along the
        top eigenvector (almost surely, for a Gaussian start) finds the top one.
      iterations: the products taken (each one VJP and one JVP over the sentences).
    """

    eigenvalue: float
    residual: float
    iterations: int


@functools.lru_cache(maxsize=4)
def _jacobian_products(score: Callable[[Params, dict], Array]) -> tuple[Callable, Callable]:
    def transpose_product(params: Params, slices: tuple, u_slices: tuple):  # Jᵀu, ‖Jᵀu‖²
        pullbacks = [jax.vjp(lambda p, b=b: score(p, b), params)[1] for b in slices]
        pieces = [pullback(u)[0] for pullback, u in zip(pullbacks, u_slices, strict=True)]
        total = jax.tree.map(lambda *leaves: sum(leaves[1:], start=leaves[0]), *pieces)
        return total, _squared_norm_partials(total)

    def product(params: Params, slices: tuple, tangent: Params) -> Array:  # J t
        return jnp.concatenate(
            [jax.jvp(lambda p, b=b: score(p, b), (params,), (tangent,))[1] for b in slices]
        )

    return jax.jit(transpose_product), jax.jit(product)


def top_ntk_eigenvalue(
    model: MiniLMScalarModel,
    batch: dict,
    *,
    key: PRNGKey,
    chunk: int = 10,
    relative_residual: float = 1e-6,
    max_iterations: int = 200,
) -> PowerIteration:
    """``λ_1(Θ)`` of the NTK over ALL parameters from ``u ← J(Jᵀu)``, never forming ``Θ``.

    The products are plain reverse- and forward-mode derivatives of ``model.score`` on
    ``chunk``-sentence slices (a route that shares nothing with ``model.ntk`` but the network),
    so the top eigenvalue the decay fits normalise by (eq. (32): ``log(λ_k/λ_1)``) is checked
    off the diagonal, which the trace (:func:`squared_gradient_norms`) cannot see. ``Jᵀu`` stays
    on the device, summed over slices in float32; its squared norm is summed in blocks
    (:func:`_squared_norm_partials`), and ``u`` and ``Θu`` (``n`` numbers) live in float64.
    The start is a standard Gaussian vector drawn from ``key`` (a fixed start such as ``u ∝ 1``
    can be orthogonal to the top eigenvector, and then converges to another eigenvalue);
    iteration stops at ``‖Θu − λu‖ ≤ relative_residual·λ``.

    Raises:
      ValueError: ``chunk`` or ``max_iterations`` below 1, or ``relative_residual`` ≤ 0.
    """
    if chunk < 1 or max_iterations < 1 or not relative_residual > 0:
        raise ValueError(
            "top_ntk_eigenvalue: chunk and max_iterations must be ≥ 1 and relative_residual "
            f"> 0, got {chunk}, {max_iterations}, {relative_residual}."
        )
    transpose_product, product = _jacobian_products(model.score)
    n = int(np.shape(batch["input_ids"])[0])
    starts = range(0, n, chunk)
    slices = tuple({k: v[start : start + chunk] for k, v in batch.items()} for start in starts)
    score_dtype = jax.eval_shape(model.score, model.params, slices[0]).dtype

    u = np.array(jax.random.normal(key, (n,)), np.float64)
    u = u / np.linalg.norm(u)
    eigenvalue, residual, iterations = 0.0, np.inf, 0
    while iterations < max_iterations:
        iterations += 1
        u_slices = tuple(jnp.asarray(u[start : start + chunk], score_dtype) for start in starts)
        t, partials = transpose_product(model.params, slices, u_slices)
        eigenvalue = _sum64(partials)  # uᵀΘu with ‖u‖ = 1
        theta_u = np.asarray(product(model.params, slices, t), np.float64)
        residual = float(np.linalg.norm(theta_u - eigenvalue * u)) / eigenvalue
        if residual <= relative_residual:
            break
        u = theta_u / np.linalg.norm(theta_u)
    return PowerIteration(eigenvalue, residual, iterations)
