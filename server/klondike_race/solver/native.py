"""The solver's compiled core: ``search.py`` compiled by mypyc, with the plain module as
the fallback (docs/solver.md, "The compiled core").

``search.py`` is the one source. ``build()`` copies it, with its SHA-256 appended as
``SOURCE_SHA256``, to a module named ``_search_native`` in a scratch copy of the package,
compiles that with mypyc and puts the two extension files next to this file. ``core()``
is the module the solver searches with: the compiled one when it exists, imports, and
was compiled from the ``search.py`` beside it (an edited ``search.py`` is never shadowed
by an old build); else ``search`` itself. ``KR_SOLVER_CORE=python`` forces the plain
module (``native`` insists on the compiled one: an error when it is missing or stale).

The two searches are the same code: the same positions in the same order, the same
answers and lines (tests/solver/test_native.py); the compiled one runs about 3x as
many positions a second (docs/benchmarks.md).

    klondike-race build-solver [--force]   # also: python -m klondike_race.solver.native

needs a C compiler, Python's headers and mypy (``pip install 'klondike-race[native]'``);
deploy/run.sh, tests/run.sh and deploy/Dockerfile run it. Without them the solver is the
plain module, correct and about a third as fast.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from . import search

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "search.py"
NAME = "_search_native"  # the compiled module (klondike_race.solver._search_native)
ENV = "KR_SOLVER_CORE"  # python | native | unset (the compiled one when it is current)


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
        return None, "stale: search.py changed since it was built"
    return module, "compiled"


def core(prefer: str | None = None) -> ModuleType:
    """The module the solver searches with (see the module's docstring); ``prefer``
    (else $KR_SOLVER_CORE): ``python``, ``native`` or empty."""
    prefer = os.environ.get(ENV, "") if prefer is None else prefer
    if prefer == "python":
        return search
    if prefer not in ("", "native"):
        raise CoreError(f"{ENV} must be 'python' or 'native', not {prefer!r}")
    module, why = compiled()
    if module is not None:
        return module
    if prefer == "native":
        raise CoreError(f"the compiled solver core is {why}: run klondike-race build-solver")
    return search


def describe(module: ModuleType) -> str:
    return "compiled (mypyc)" if module is not search else "python"


def build(force: bool = False) -> str:
    """Compile ``search.py`` unless the compiled module is current; what was done.
    Raises CoreError when it cannot be built (no compiler, headers or mypy)."""
    if not force and compiled()[0] is not None:
        return "the compiled solver core is current"
    try:
        import mypyc  # noqa: F401  (only its presence: the build runs it in a subprocess)
    except ImportError as err:
        raise CoreError("mypy (with mypyc) is not installed: pip install mypy") from err
    digest = source_hash()
    package = HERE.parent  # the klondike_race package
    with tempfile.TemporaryDirectory(prefix="kr-native-") as tmp:
        copy = Path(tmp) / package.name
        shutil.copytree(package, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        target = copy / HERE.name / f"{NAME}.py"
        target.write_text(SOURCE.read_text() + f'\n\nSOURCE_SHA256: Final = "{digest}"\n')
        run = subprocess.run(
            [sys.executable, "-m", "mypyc", str(target.relative_to(tmp))],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode:
            raise CoreError(f"mypyc failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
        built = sorted((copy / HERE.name).glob(f"{NAME}*.so"))
        if not built:
            raise CoreError("mypyc made no extension module")
        for old in HERE.glob(f"{NAME}*.so"):
            old.unlink()
        for path in built:
            shutil.copy2(path, HERE / path.name)
    importlib.invalidate_caches()
    return "built the compiled solver core: " + ", ".join(p.name for p in built)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        print(build(force="--force" in args))
    except CoreError as err:
        print(f"{err}\nthe solver runs its plain Python core (a third as fast)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
