"""The lock files and requirements/sync.py, which brings a virtualenv to one of them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCKS = [ROOT / "requirements-dev.txt", ROOT / "requirements.txt"]

spec = importlib.util.spec_from_file_location("sync", ROOT / "requirements" / "sync.py")
assert spec and spec.loader
sync = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sync)

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_each_lock_holds_what_pyproject_asks_for(lock: Path) -> None:
    pins = sync.read_lock(lock)
    reqs = sync.requirements(PYPROJECT, sync.lock_extras(lock))
    assert sync.mismatch(reqs, pins, lock.name) is None
    assert {"redis", "websockets", "setuptools"} <= pins.keys()


def test_the_dev_lock_is_for_the_dev_and_fast_extras_and_main_for_none() -> None:
    assert sync.lock_extras(LOCKS[0]) == ["dev", "fast"]
    assert sync.lock_extras(LOCKS[1]) == []
    assert "pytest" in sync.read_lock(LOCKS[0])
    assert "pytest" not in sync.read_lock(LOCKS[1])


def test_main_pins_the_same_versions_as_dev() -> None:
    dev, main = (sync.read_lock(p) for p in LOCKS)
    assert {name: dev.get(name) for name in main} == main


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_every_pin_has_hashes_and_no_index_address_is_written(lock: Path) -> None:
    text = lock.read_text()
    lines = text.splitlines()
    pinned = [i for i, line in enumerate(lines) if sync.PIN.match(line)]
    assert len(pinned) == len(sync.read_lock(lock)) > 10
    for i in pinned:
        assert lines[i].endswith(" \\") and lines[i + 1].startswith("    --hash=sha256:")
    for option in ("--index-url", "--extra-index-url", "--find-links", "--trusted-host", "file://"):
        assert option not in text


def test_a_requirement_missing_from_the_lock_is_named_with_how_to_relock() -> None:
    reqs = [sync.Requirement("orjson>=3.9"), sync.Requirement("pytest-xdist>=3.6")]
    line = sync.mismatch(reqs, {"orjson": "3.13.0"}, "requirements-dev.txt")
    assert line == (
        "requirements-dev.txt does not match pyproject.toml: pytest-xdist>=3.6 is not in it;"
        " relock with: bash requirements/lock.sh"
    )


def test_a_locked_version_outside_the_bound_is_named() -> None:
    line = sync.mismatch([sync.Requirement("redis[hiredis]>=8.2")], {"redis": "7.4.0"}, "x.txt")
    assert line is not None
    assert "redis==7.4.0" in line and "redis[hiredis]>=8.2" in line and "lock.sh" in line


def test_a_requirement_for_another_platform_is_not_asked_of_the_lock() -> None:
    reqs = sync.requirements(
        {"project": {"dependencies": ["a>=1", "b>=1; sys_platform == 'nonesuch'"]}}, []
    )
    assert [r.name for r in reqs] == ["a"]


def test_differences_name_each_package_that_is_off_the_lock() -> None:
    pins = {"redis": "8.2.0", "orjson": "3.13.0", "ruff": "0.17.6"}
    installed = {"redis": "8.0.0", "orjson": "3.13.0", "six": "1.17.0", "pip": "23.2.1"}
    assert sync.differences(installed, pins, keep={}) == [
        "  redis: locked 8.2.0, installed 8.0.0",
        "  ruff: locked 0.17.6, not installed",
        "  six: installed 1.17.0, not in the lock",
    ]
    # deploy/run.sh keeps the dev lock's packages, only at their locked versions
    assert sync.differences({"six": "1.17.0"}, {}, keep={"six": "1.17.0"}) == []
    assert sync.differences({"six": "1.16.0"}, {}, keep={"six": "1.17.0"}) == [
        "  six: installed 1.16.0, not in the lock"
    ]


def test_sync_stops_on_a_lock_that_does_not_match_before_installing(tmp_path: Path) -> None:
    """A dependency added to pyproject.toml without relocking: one line, exit 1, no pip."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    added = pyproject.replace(
        "dependencies = [\n", 'dependencies = [\n    "sortedcollections>=2",\n'
    )
    assert added != pyproject
    (tmp_path / "pyproject.toml").write_text(added)
    script = ROOT / "requirements" / "sync.py"
    done = subprocess.run(
        [sys.executable, str(script), str(LOCKS[0]), "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"{LOCKS[0]} does not match pyproject.toml: sortedcollections>=2 is not in it;"
        " relock with: bash requirements/lock.sh"
    ]
