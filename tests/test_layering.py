"""Layering, enforced (optax's "don't use symbols in ``_src``"): imports only point down the
layers of DESIGN.md, no module reaches into another package's private (``_x``) modules or
names, and running an experiment never imports the claims."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The command line: `ntsim.cli` and the verify/reproduce drivers behind it.
COMMAND_LINE = ("ntsim.cli", "ntsim._reproduce")

# What each layer may not import (prefix match on the imported module).
FORBIDDEN = {
    "ntsim.core": ("ntsim.theory", "ntsim.claims", "ntsim.transformers", *COMMAND_LINE,
                   "ntsim.experiment", "ntsim.mutation", "ntsim.falsify", "experiments"),
    "ntsim.transformers": ("ntsim.theory", "ntsim.claims", *COMMAND_LINE, "ntsim.experiment",
                           "ntsim.mutation", "ntsim.falsify", "experiments"),
    "ntsim.theory": ("ntsim.claims", *COMMAND_LINE, "ntsim.experiment", "ntsim.mutation",
                     "ntsim.falsify", "experiments"),
    "ntsim.claims": (*COMMAND_LINE, "ntsim.experiment", "ntsim.mutation", "ntsim.falsify",
                     "experiments"),
    "ntsim.experiment": ("ntsim.claims", *COMMAND_LINE, "ntsim.mutation", "ntsim.falsify"),
    "ntsim.mutation": (*COMMAND_LINE, "ntsim.experiment", "experiments"),
    "experiments": ("ntsim.claims", "ntsim.mutation", "ntsim.falsify"),
    "ntsim.falsify": (*COMMAND_LINE, "ntsim.experiment", "ntsim.mutation", "experiments"),
}  # fmt: skip


def _modules():
    for base in ("ntsim", "experiments"):
        for path in sorted((ROOT / base).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            yield name, is_package, ast.parse(path.read_text(encoding="utf-8"))


def _imports(name: str, is_package: bool, tree: ast.AST):
    """(imported module, imported name or None) for every import, lazy ones included."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            module = (
                (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            )
            for alias in node.names:
                yield module, alias.name


def _inside(importer: str, package: str) -> bool:
    return importer == package or importer.startswith(package + ".")


def _private_violation(importer: str, module: str, imported: str | None) -> str | None:
    parts = module.split(".")
    if parts[0] not in ("ntsim", "experiments"):
        return None
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])  # a private module belongs to its parent package
            if not _inside(importer, owner):
                return f"{importer} imports private module {module}"
            break
    if imported and imported.startswith("_") and not imported.startswith("__"):
        owner = module if not parts[-1].startswith("_") else ".".join(parts[:-1])
        if not _inside(importer, owner):
            return f"{importer} imports private name {imported} from {module}"
    return None


def test_no_private_imports_across_packages_and_layers_point_down():
    violations = []
    for name, is_package, tree in _modules():
        for module, imported in _imports(name, is_package, tree):
            if problem := _private_violation(name, module, imported):
                violations.append(problem)
            for layer, forbidden in FORBIDDEN.items():
                if _inside(name, layer) and module.startswith(forbidden):
                    violations.append(f"{name} (layer {layer}) imports {module}")
    assert not violations, "\n".join(sorted(set(violations)))


def test_the_checker_sees_violations():
    """The rules above catch what they are meant to (a test of the test)."""
    assert _private_violation("ntsim.experiment", "ntsim.claims._contract", "SCALES")
    assert _private_violation("ntsim.claims.stability._x", "ntsim.theory.stability._tables", "f")
    assert _private_violation("ntsim.cli", "ntsim.claims._report", "_write_index")
    assert _private_violation("ntsim.theory.foo", "ntsim.claims", "_private")
    assert not _private_violation("ntsim.claims.stability._x", "ntsim.claims._decisions", "f")
    assert not _private_violation("ntsim.theory.a._b", "ntsim.theory.a._c", "g")
    assert not _private_violation("ntsim.claims.x", "ntsim._scales", "SCALES")


def test_running_an_experiment_imports_no_claims():
    code = (
        "import sys\n"
        "from ntsim.experiment import list_experiments, load_experiment\n"
        "import ntsim.cli\n"
        "for name in list_experiments():\n"
        "    load_experiment(name)\n"
        "bad = sorted(m for m in sys.modules if m.startswith('ntsim.claims'))\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
