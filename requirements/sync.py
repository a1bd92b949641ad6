"""Bring a virtualenv to a lock file, exactly, and say what differed.

Run with the virtualenv's own Python (tests/run.sh and deploy/run.sh do):

    .venv/bin/python requirements/sync.py requirements-dev.txt
    .venv/bin/python requirements/sync.py requirements.txt --keep requirements-dev.txt

1. The lock must hold every requirement of pyproject.toml (the runtime, the extras the lock
   is for, the build backend) at a version the requirement allows; else one line names the
   package and how to relock, and nothing is installed.
2. `pip install --require-hashes --no-deps` the lock: every package at its locked version,
   every file checked against its hash. With `--no-compile`, pip writes no bytecode for
   them (tests/run.sh: its Python reads and writes bytecode in a cache of its own,
   PYTHONPYCACHEPREFIX, so pip's would never be read; compiling every file of every
   package took a third of a fresh install's time).
3. Packages the lock does not name are uninstalled (with `--keep`, those another lock names
   at its locked version stay: deploy/run.sh keeps the test tools tests/run.sh installed).
4. The project itself, editable, with no dependencies of its own choosing.
5. `pip freeze` is compared with the lock; any difference is printed and the exit is 1.

pip itself is the installer, not one of the project's packages: it is neither locked nor
compared. Standard library only, with pip's vendored `packaging` for requirement markers.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a virtualenv before its first sync: pip always carries packaging
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
RELOCK = "relock with: bash requirements/lock.sh"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
EXTRAS = re.compile(r"^# extras:(.*)$", re.MULTILINE)
NOT_LOCKED = {"pip"}  # the installer


def read_lock(path: Path) -> dict[str, str]:
    """{canonical name: version} of a pip-compile lock file."""
    pins = {}
    for line in path.read_text().splitlines():
        if m := PIN.match(line):
            pins[canonicalize_name(m[1])] = m[2]
    return pins


def lock_extras(path: Path) -> list[str]:
    """The extras a lock was compiled for, from the `# extras:` line lock.sh writes."""
    m = EXTRAS.search(path.read_text())
    return m[1].split() if m else []


def requirements(pyproject: dict, extras: list[str]) -> list[Requirement]:
    """What pyproject.toml asks for: the runtime, the given extras, the build backend."""
    project = pyproject["project"]
    lines = list(project.get("dependencies", []))
    for extra in extras:
        lines += project.get("optional-dependencies", {}).get(extra, [])
    lines += pyproject.get("build-system", {}).get("requires", [])
    reqs = [Requirement(line) for line in lines]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""})]


def mismatch(reqs: list[Requirement], pins: dict[str, str], lock: str) -> str | None:
    """The first requirement the lock does not satisfy, said in one line; None if none."""
    for req in reqs:
        name = canonicalize_name(req.name)
        if name not in pins:
            return f"{lock} does not match pyproject.toml: {req} is not in it; {RELOCK}"
        if not req.specifier.contains(pins[name], prereleases=True):
            return (
                f"{lock} does not match pyproject.toml: it has {req.name}=={pins[name]},"
                f" pyproject.toml asks for {req}; {RELOCK}"
            )
    return None


def frozen() -> dict[str, str]:
    """{canonical name: version} of what `pip freeze --all` lists, editable installs aside."""
    out = pip("freeze", "--all", "--exclude-editable", capture=True)
    found = {}
    for line in out.splitlines():
        if m := PIN.match(line):
            found[canonicalize_name(m[1])] = m[2]
        elif " @ " in line:  # installed from a URL or a path, not from the index
            name = line.split(" @ ", 1)[0]
            found[canonicalize_name(name)] = "(" + line.split(" @ ", 1)[1] + ")"
    return found


def differences(installed: dict[str, str], pins: dict[str, str], keep: dict[str, str]) -> list[str]:
    lines = []
    for name, version in sorted(pins.items()):
        have = installed.get(name)
        if have is None:
            lines.append(f"  {name}: locked {version}, not installed")
        elif have != version:
            lines.append(f"  {name}: locked {version}, installed {have}")
    for name, have in sorted(installed.items()):
        if name in pins or name in NOT_LOCKED or keep.get(name) == have:
            continue
        lines.append(f"  {name}: installed {have}, not in the lock")
    return lines


def pip(*args: str, capture: bool = False) -> str:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    done = subprocess.run(cmd, check=True, text=True, capture_output=capture)
    return done.stdout if capture else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock", type=Path, help="the lock file to sync to")
    parser.add_argument("--keep", type=Path, help="a lock whose packages may stay installed")
    parser.add_argument("--check", action="store_true", help="compare only; install nothing")
    parser.add_argument(
        "--no-compile", action="store_true", help="no bytecode written at install (pip's own)"
    )
    parser.add_argument("--project", type=Path, default=ROOT, help="the pyproject.toml's folder")
    args = parser.parse_args()
    lock = str(args.lock)
    pins = read_lock(args.lock)
    keep = read_lock(args.keep) if args.keep else {}
    pyproject = tomllib.loads((args.project / "pyproject.toml").read_text())
    if problem := mismatch(requirements(pyproject, lock_extras(args.lock)), pins, lock):
        print(problem, file=sys.stderr)
        return 1
    if not args.check:
        compile_ = ["--no-compile"] if args.no_compile else []
        pip("install", "-q", *compile_, "--require-hashes", "--no-deps", "-r", lock)
        if strays := sorted(_strays(frozen(), pins, keep)):
            pip("uninstall", "-q", "-y", *strays)
        pip("install", "-q", "--no-deps", "--no-build-isolation", "-e", str(args.project))
    if diff := differences(frozen(), pins, keep):
        print(f"the virtualenv differs from {lock}:", *diff, sep="\n", file=sys.stderr)
        return 1
    return 0


def _strays(installed: dict[str, str], pins: dict[str, str], keep: dict[str, str]) -> set[str]:
    """Installed packages neither lock allows at their installed version."""
    return {
        name
        for name, have in installed.items()
        if name not in pins and name not in NOT_LOCKED and keep.get(name) != have
    }


if __name__ == "__main__":
    sys.exit(main())
