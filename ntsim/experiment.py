"""The experiment contract and its runner.

An experiment is a module ``experiments/<topic>/<name>.py`` that defines

* ``Config`` — a frozen dataclass with typed fields (``int``, ``float``, ``str``, ``bool``,
  ``tuple[int, ...]``, ``tuple[float, ...]``, ``tuple[str, ...]``), each declared once with
  :func:`param` (meaning, allowed range, whether it changes compiled shapes) on a
  :class:`Validated` dataclass, which checks the rules on construction (``check()`` for rules
  across fields) and from which ``ntsim run NAME --help`` prints them;
* ``SCALES = {"quick": Config(...), "full": Config(...)}`` — quick runs in well under a
  minute on a 2-core CPU, full is the paper's size;
* ``run(config, key) -> dict`` — arrays and numbers only (no plotting, no files);
* ``plot(results) -> matplotlib.figure.Figure`` — reads only ``results``.

:func:`run_experiment` glues them: it applies ``--set field=value`` overrides (checked
against the field types, with an error that lists the valid fields), runs, plots, and
writes ``<out>/<topic>/<name>[suffix].png`` and ``.json`` atomically. The JSON holds the
results, the config, the overrides, the seed, the scale, package versions, the git commit
and the wall time. The file suffix encodes what differs from the paper's configuration
(``_quick``, ``_seed<S>``, ``_<hash of overrides>``), so a run never overwrites the output
of a different configuration.

An experiment that plots a simulation some claims also read calls it as
``shared_run(fn, key, setting)`` (:mod:`ntsim._shared_runs`): the plain call, except inside
``ntsim reproduce --scale quick``, where the experiment runs it with the claims' key and the
claims take the run instead of computing it again.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import inspect
import io
import json
import math
import pathlib
import pkgutil
import textwrap
import time
import tokenize
import types
import typing
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from ntsim import _io
from ntsim._config import Validated, allowed_text, field_rule, param, validate_fields
from ntsim._scales import SCALES
from ntsim._shared_runs import shared_run
from ntsim._validation import check_choice, check_int_fields

__all__ = [
    "Validated",
    "check_choice",
    "check_int_fields",
    "describe_experiment",
    "ExperimentOutput",
    "list_experiments",
    "load_experiment",
    "output_stem",
    "param",
    "parse_overrides",
    "run_experiment",
    "shared_run",
    "validate_fields",
]

_REQUIRED = ("Config", "SCALES", "run", "plot")


class ExperimentOutput(NamedTuple):
    """What :func:`run_experiment` produced."""

    name: str
    png: pathlib.Path
    json: pathlib.Path
    results: dict
    wall_time_s: float


def list_experiments() -> list[str]:
    """Names ``<topic>/<name>`` of every experiment module under the ``experiments`` package."""
    import experiments

    names = []
    for info in pkgutil.walk_packages(experiments.__path__, prefix="experiments."):
        parts = info.name.split(".")
        if info.ispkg or len(parts) != 3 or parts[-1].startswith("_"):
            continue
        names.append(f"{parts[1]}/{parts[2]}")
    return sorted(names)


def load_experiment(name: str) -> types.ModuleType:
    """Import experiment ``<topic>/<name>`` and check that it follows the contract."""
    available = list_experiments()
    if name not in available:
        raise ValueError(f"Unknown experiment {name!r}. Available: {', '.join(available)}.")
    module = importlib.import_module("experiments." + name.replace("/", "."))
    missing = [attr for attr in _REQUIRED if not hasattr(module, attr)]
    if missing:
        raise TypeError(f"Experiment {name} does not define {missing} (see ntsim.experiment).")
    if set(module.SCALES) != set(SCALES):
        raise TypeError(f"Experiment {name}: SCALES must have keys {SCALES}.")
    return module


def _convert(field_name: str, annotation: Any, text: str) -> Any:
    """Parse one ``--set`` value according to the dataclass field's annotation."""
    origin = typing.get_origin(annotation)
    if origin is tuple:
        (item_type, *_rest) = typing.get_args(annotation)
        items = [item.strip() for item in text.split(",")]
        if len(items) > 1 and not items[-1]:
            items.pop()  # a trailing comma: "1," is the tuple (1,)
        if any(not item for item in items):
            raise ValueError(
                f"--set {field_name}={text}: an empty element (two commas, or nothing given); "
                "write the tuple as 1,2,4"
            )
        return tuple(_convert(field_name, item_type, item) for item in items)
    try:
        if annotation is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        if annotation is float:
            value = float(text)
            if not math.isfinite(value):
                raise ValueError(
                    f"--set {field_name}={text}: expected a finite number, got {text!r}."
                )
            return value
        if annotation is int:
            value = int(text)
            if abs(value) >= 2**31:
                raise ValueError(
                    f"--set {field_name}={text}: {value} is too large (sizes and counts must fit "
                    "in 32 bits)."
                )
            return value
        if annotation is str:
            return text
    except ValueError as error:
        if str(error).startswith("--set"):
            raise
        raise ValueError(
            f"--set {field_name}={text}: expected a value of type {annotation.__name__}."
        ) from None
    shown = getattr(annotation, "__name__", annotation)
    raise ValueError(
        f"--set {field_name}=...: {field_name} is a nested setting ({shown}) that --set cannot "
        "change; build the Config in Python to change it."
    )


def parse_overrides(config_cls: type, assignments: Sequence[str]) -> dict[str, Any]:
    """Turn ``["d=200", "depths=1,2,4"]`` into typed field values of ``config_cls``.

    Raises:
      ValueError: malformed assignment, unknown field (the message lists the valid fields)
        or a value that does not parse as the field's type.
    """
    hints = typing.get_type_hints(config_cls)
    fields = {f.name for f in dataclasses.fields(config_cls)}
    overrides = {}
    for assignment in assignments:
        name, sep, value = assignment.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"--set expects FIELD=VALUE, got {assignment!r}.")
        if name not in fields:
            raise ValueError(
                f"--set {name}: {config_cls.__module__}.Config has no field {name!r}. "
                f"Valid fields: {', '.join(sorted(fields))}."
            )
        overrides[name] = _convert(name, hints[name], value.strip())
    return overrides


def output_stem(name: str, *, scale: str, seed: int, overrides: dict[str, Any]) -> str:
    """File stem that differs whenever the configuration differs (module doc)."""
    stem = name.split("/", 1)[1]
    if scale != "full":
        stem += f"_{scale}"
    if seed != 0:
        stem += f"_seed{seed}"
    if overrides:
        digest = hashlib.sha1(
            json.dumps(_io.to_jsonable(overrides), sort_keys=True).encode()
        ).hexdigest()
        stem += f"_{digest[:8]}"
    return stem


def run_experiment(
    name: str,
    *,
    scale: str = "quick",
    seed: int = 0,
    out_dir: str | pathlib.Path = "figures",
    overrides: Sequence[str] | dict[str, Any] = (),
) -> ExperimentOutput:
    """Run one experiment, plot it, and write its PNG and JSON (module doc).

    Args:
      name: ``<topic>/<name>`` as listed by :func:`list_experiments`.
      scale: ``"quick"`` or ``"full"``.
      seed: integer seed of the ``jax.random`` key passed to ``run``.
      out_dir: root output directory; files go to ``<out_dir>/<topic>/``.
      overrides: ``["field=value", ...]`` or an already-typed dict of config fields.
    """
    import jax
    import matplotlib

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}.")
    module = load_experiment(name)
    if not isinstance(overrides, dict):
        overrides = parse_overrides(module.Config, overrides)
    config = dataclasses.replace(module.SCALES[scale], **overrides)
    folder = pathlib.Path(out_dir) / name.split("/", 1)[0]
    stem = output_stem(name, scale=scale, seed=seed, overrides=overrides)
    json_path, png_path = folder / f"{stem}.json", folder / f"{stem}.png"
    _check_output_paths(folder, png_path, json_path)

    start = time.perf_counter()
    results = jax.block_until_ready(module.run(config, jax.random.PRNGKey(seed)))
    wall_time = time.perf_counter() - start

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    figure = module.plot(results)
    record = {
        "experiment": name,
        "scale": scale,
        "seed": seed,
        "config": config,
        "overrides": overrides,
        "wall_time_s": wall_time,
        "metadata": _io.run_metadata(),
        "results": results,
    }
    _warn_if_config_changed(json_path, _io.to_jsonable(config))
    try:
        _io.write_figure_and_record(figure, png_path, json_path, record)
    finally:
        plt.close(figure)
    return ExperimentOutput(name, png_path, json_path, results, wall_time)


def _check_output_paths(folder: pathlib.Path, *paths: pathlib.Path) -> None:
    """Refuse, before computing, outputs that could not be written: a topic folder that is a
    file, or a PNG/JSON path taken by a directory (the write's rename would fail at the end)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"run_experiment: {folder} exists and is not a directory; move it away "
                         "or choose another out_dir (--out)")  # fmt: skip
    for path in paths:
        if path.is_dir():
            raise ValueError(f"run_experiment: the output {path} is a directory; move it away "
                             "or choose another out_dir (--out)")  # fmt: skip


def _warn_if_config_changed(json_path: pathlib.Path, config: dict) -> None:
    """Same stem but another config can only mean edited defaults: say so loudly."""
    if not json_path.exists():
        return
    try:
        previous = json.loads(json_path.read_text()).get("config")
    except (OSError, ValueError):
        return
    if previous != config:
        warnings.warn(
            f"{json_path} was written by a different configuration (the experiment's "
            "defaults changed); it is being replaced.",
            stacklevel=3,
        )


def _class_comments(config_cls: type) -> dict[str, str]:
    """The comment each field declared in ``config_cls`` itself carries: its trailing
    ``# ...``, or else the comment lines right above it."""
    source = textwrap.dedent(inspect.getsource(config_cls))
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    found = {}
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        trailing = [comments[n] for n in range(item.lineno, item.end_lineno + 1) if n in comments]
        above, line = [], item.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            above.insert(0, comments.get(line, ""))
            line -= 1
        found[item.target.id] = " ".join(trailing or above)
    return found


def _docstring_attributes(cls: type) -> dict[str, str]:
    """``name: text`` entries of the ``Attributes:`` section of ``cls``' docstring."""
    found, inside = {}, False
    for line in inspect.cleandoc(cls.__doc__ or "").splitlines():
        if line.strip() == "Attributes:":
            inside = True
        elif inside and line and not line.startswith(" "):
            inside = False
        elif inside and ":" in line and line.startswith("  ") and not line.startswith("    "):
            name, _, text = line.strip().partition(":")
            found[name.strip()] = text.strip()
    return found


def _field_comments(config_cls: type) -> dict[str, str]:
    """Each field's meaning, written once beside it: its :func:`~ntsim.experiment.param`
    declaration, else the comment on (or above) its declaration in ``config_cls`` or a
    dataclass it inherits from (``Config`` may be a theory setting shared with the claims),
    else its ``Attributes:`` docstring entry."""
    found: dict[str, str] = {}
    for cls in reversed(config_cls.__mro__[:-1]):
        if not dataclasses.is_dataclass(cls):
            continue
        documented = _docstring_attributes(cls)
        documented.update({name: text for name, text in _class_comments(cls).items() if text})
        found.update({name: text for name, text in documented.items() if text})
    for field in dataclasses.fields(config_cls):  # a param() declaration says it itself
        rule = field_rule(field)
        if rule is not None:
            found[field.name] = rule.meaning
    return found


def _shown_value(value: Any) -> str:
    if dataclasses.is_dataclass(value):
        return f"{type(value).__name__}(…)"  # a nested setting: shared with a claim
    text = json.dumps(_io.to_jsonable(value))
    return text if len(text) <= 28 else text[:27] + "…"


def _type_name(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text or str(annotation)


def describe_experiment(name: str) -> str:
    """What ``ntsim run NAME --help`` prints: the figure it draws, then each config field with
    its type, its quick and full values, its allowed values, and its meaning (fields marked
    ``*`` change the compiled programs — a shape or a loop length — so a new value compiles
    anew).

    Examples:
      >>> text = describe_experiment("linear_teachers/fig1_covariance_alignment")
      >>> "d" in text and "input dimension" in text
      True
    """
    module = load_experiment(name)
    summary = (module.__doc__ or "").strip().split("\n\n")[0]
    comments = _field_comments(module.Config)
    quick, full = module.SCALES["quick"], module.SCALES["full"]
    rows = [("field", "type", "quick", "full", "allowed", "meaning")]
    shaped = False
    for f in dataclasses.fields(module.Config):
        values = [_shown_value(getattr(c, f.name)) for c in (quick, full)]
        rule = field_rule(f)
        meaning = comments.get(f.name, "")
        label = f.name + (" *" if rule is not None and rule.shape else "")
        shaped |= label.endswith("*")
        rows.append((label, _type_name(f.type), *values, allowed_text(f), meaning))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    table = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True))
        + "  "
        + row[5]
        for row in rows
    ]
    usage = f"usage: ntsim run {name} [--scale quick|full] [--seed S] [--set FIELD=VALUE ...]"
    figure = getattr(module, "FIGURE", None) or f"figures/{name}.png (+ .json)"
    lines = [usage, "", summary, "", f"draws: {figure}", "", "config fields:", *table]
    if shaped:
        lines += ["", "* changes the compiled programs (a shape or a loop length): compiles anew"]
    return "\n".join(lines) + "\n"
