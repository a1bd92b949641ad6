#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine with Python 3.11: installs what the
# tests need (.venv brought to exactly requirements-dev.txt; Debian packages only when
# missing), checks style and types, then runs pytest. Extra arguments go to pytest.
#   bash tests/run.sh --latest [PYTEST ARGS]: the same gates in a scratch virtualenv with
#   the newest versions pyproject.toml allows today instead of the lock (tomorrow's fresh
#   install), on the tests that need no browser and no production topology.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

python3 -c 'import ensurepip' 2>/dev/null || apt_install python3-venv
# The browser tests (tests/client) drive Debian's Chromium through Playwright's driver;
# a Playwright browser download is never used. Without Chromium those tests fail.
[ -x /usr/bin/chromium ] || apt_install chromium fonts-dejavu-core
# tests/service/test_balancer.py and test_topology.py run deploy/haproxy.cfg with Debian's
# HAProxy; test_topology.py and test_failover.py run Debian's redis-server and
# redis-sentinel on free ports of their own, test_cluster.py a Redis Cluster of Debian's
# redis-server made with its redis-cli (redis-tools) (a system Redis the package may
# start on port 6379 is neither used nor needed).
[ -x /usr/sbin/haproxy ] || apt_install haproxy
[ -x /usr/bin/redis-server ] && [ -x /usr/bin/redis-sentinel ] && [ -x /usr/bin/redis-cli ] \
  || apt_install redis-server redis-sentinel redis-tools
# The solver's compiled core (csearch.c) needs a C compiler and Python's headers; the tests
# run both the compiled and the plain core (tests/solver/test_native.py).
has_headers='import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")))'
command -v cc >/dev/null && python3 -c "$has_headers" || apt_install gcc python3-dev

venv=.venv
if [ "${1:-}" = --latest ]; then
  shift
  venv="${TMPDIR:-/tmp}/klondike-race-latest"
  rm -rf "$venv" && python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -U pip
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -U -e '.[dev,fast]'
  "$venv/bin/python" -m pip list --disable-pip-version-check --format=freeze \
    | tr '\n' ' ' && echo
  set -- tests --ignore=tests/client --ignore=tests/service/test_topology.py \
    --ignore=tests/service/test_failover.py --ignore=tests/service/test_cluster.py "$@"
else
  # the lock must match pyproject.toml (else one line says how to relock); then every
  # package at its locked version, nothing else, and `pip freeze` compared with the lock
  # (no bytecode compiled at install: the suite's Python keeps its own, below)
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python requirements/sync.py requirements-dev.txt --no-compile
fi
"$venv/bin/klondike-race" build-solver  # a no-op when the build is current

# Bytecode is cached (in the virtualenv, not the tree) even where the environment says not
# to write it: the suite starts hundreds of Python processes (servers, solver workers).
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/$venv/pycache"
[ "$venv" = .venv ] || PYTHONPYCACHEPREFIX="$venv/pycache"
# One collection beside the checks below compiles the modules and rewrites the tests'
# asserts into that cache, which the workers then read: four workers collecting from
# nothing at once took 8 CPU-s each, from the cache 1.7. (Its errors show in the real run.)
"$venv/bin/python" -m pytest --collect-only -q -p no:cacheprovider "$@" >/dev/null 2>&1 &
compiled=$!

"$venv/bin/ruff" check server tests bench requirements
"$venv/bin/ruff" format --check server tests bench requirements
"$venv/bin/mypy"  # the packages and settings of pyproject.toml's [tool.mypy]
wait "$compiled" || true
# Parallel processes (pytest-xdist), two per core: most tests wait on servers, browsers and
# timers. Each worker takes a share of the tests and steals from the others' ends; a
# worker that dies fails the run at once, naming its test (no replacement worker).
# `-n 0` among the arguments runs one process.
workers=$(( $(nproc) * 2 )); [ "$workers" -le 8 ] || workers=8
exec "$venv/bin/python" -m pytest -n "$workers" --dist worksteal --max-worker-restart=0 "$@"
