#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine with Python 3.11: installs what the
# tests need (a virtualenv with the project and its dev extra; Debian packages only when
# missing), checks style and types, then runs pytest. Extra arguments go to pytest.
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
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,fast]'
.venv/bin/klondike-race build-solver  # a no-op when the build is current

.venv/bin/ruff check server tests bench
.venv/bin/mypy  # the packages and settings of pyproject.toml's [tool.mypy]
exec .venv/bin/python -m pytest "$@"
