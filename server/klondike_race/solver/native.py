"""The solver's compiled core: the search in C (``csearch.c``), with ``search.py`` as the
fallback (docs/solver.md, "The compiled core").

``csearch.c`` is search.py's ``Search`` and ``Relaxation`` written in C, position for
position: the same classes and keys, the same moves in the same order, so the same
answers, positions and lines (tests/solver/test_native.py compares them on reference
deals and seeds). ``build()`` compiles it with the machine's C compiler into the extension
``_csearch`` next to this file, with the source's SHA-256 in it. ``core()`` is the module
the solver searches with: the compiled one when it exists, imports, and was compiled from
the ``csearch.c`` beside it (an edited source is never shadowed by an old build); else
``search`` itself. ``KR_SOLVER_CORE=python`` forces the plain module (``native`` insists
on the compiled one: an error when it is missing or stale).

    klondike-race build-solver [--force]   # also: python -m klondike_race.solver.native

needs a C compiler (``cc``, or $CC) and Python's headers; deploy/run.sh, tests/run.sh and
deploy/Dockerfile run it. Without them the solver is the plain module: correct, and about
a twentieth to a thirtieth as fast (docs/benchmarks.md).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

from . import search

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "csearch.c"
NAME = "_csearch"  # the compiled module (klondike_race.solver._csearch)
ENV = "KR_SOLVER_CORE"  # python | native | unset (the compiled one when it is current)
FLAGS = ("-O2", "-shared", "-fPIC", "-Wall")


class CoreError(RuntimeError):
    """The compiled core was asked for and cannot be used, or cannot be built."""


def source_hash() -> str:
    return hashlib.sha256(SOURCE.read_bytes()).hexdigest()


def compiled() -> tuple[ModuleType | None, str]:
    """The compiled module if it can be used, with why not otherwise."""
    try:
        module = importlib.import_module(f"{__package__}.{NAME}")
    except ImportError as err:
        return None, f"not built ({err})"
    if getattr(module, "SOURCE_SHA256", None) != source_hash():
        return None, "stale: csearch.c changed since it was built"
    # the restarts are glue in Python: the same class drives either core's searches
    module.Restarts = search.Restarts  # type: ignore[attr-defined]
    return module, "compiled"


def core(prefer: str | None = None) -> ModuleType:
    """The module the solver searches with (see the module's docstring); ``prefer``
    (else $KR_SOLVER_CORE): ``python``, ``native`` or empty."""
    prefer = os.environ.get(ENV, "") if prefer is None else prefer
    if prefer == "python":
        return search
    if prefer not in ("", "native"):
        raise CoreError(f"{ENV}={prefer!r}: must be 'python' or 'native'")
    module, why = compiled()
    if module is not None:
        return module
    if prefer == "native":
        raise CoreError(
            f"{ENV}=native: the compiled solver core is {why}: run klondike-race build-solver"
        )
    return search


def describe(module: ModuleType) -> str:
    return "compiled (C)" if module is not search else "python"


def build(force: bool = False) -> str:
    """Compile ``csearch.c`` unless the compiled module is current; what was done.
    Raises CoreError when it cannot be built (no compiler or headers, or a bad source)."""
    if not force and compiled()[0] is not None:
        return "the compiled solver core is current"
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = HERE / f"{NAME}{suffix}"
    compiler = shlex.split(os.environ.get("CC", "cc"))
    with tempfile.TemporaryDirectory(prefix="kr-native-") as tmp:
        out = Path(tmp) / target.name
        command = [
            *compiler,
            *FLAGS,
            f"-I{sysconfig.get_path('include')}",
            f'-DSOURCE_SHA256="{source_hash()}"',
            str(SOURCE),
            "-o",
            str(out),
        ]
        try:
            run = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as err:
            raise CoreError(f"no C compiler ({compiler[0]}): {err}") from err
        if run.returncode:
            raise CoreError(f"the C compiler failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
        os.replace(out, target)  # whole, never half-written
    for old in HERE.glob("_search_native*.so"):  # the mypyc build of earlier versions
        old.unlink()
    importlib.invalidate_caches()
    return f"built the compiled solver core: {target.name}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        print(build(force="--force" in args))
    except CoreError as err:
        print(f"{err}\nthe solver runs its plain Python core (much slower)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
