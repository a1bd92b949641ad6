#!/usr/bin/env bash
# Run Klondike Race locally, from a fresh Debian machine with Python 3.11: brings .venv to
# exactly requirements.txt (the test tools of requirements-dev.txt may stay), installs
# the project into it, then starts it. Extra arguments go to the klondike-race command.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import ensurepip' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python requirements/sync.py requirements.txt --keep requirements-dev.txt
# the solver's compiled core (18-34x as fast) when a C compiler and Python's headers
# are here (Debian: apt install gcc python3-dev); else the plain Python core, said once
.venv/bin/klondike-race build-solver || true

if [ $# -eq 0 ]; then set -- serve; fi  # prints the URL to open
exec .venv/bin/klondike-race "$@"
