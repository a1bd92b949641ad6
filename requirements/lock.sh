#!/usr/bin/env bash
# Refreshes the lock files from pyproject.toml, with every file's hash, from this machine's
# ordinary package-index settings (no index address is written into the lock). Locked
# versions that still satisfy pyproject.toml stay; what is new or no longer allowed gets
# the newest version allowed today. Run it deliberately (a dependency added, a bound
# changed, a chosen upgrade), then `bash tests/run.sh`, and commit pyproject.toml with
# both locks.
#   requirements-dev.txt  the runtime, the dev and fast extras and the build backend
#                         (tests/run.sh)
#   requirements.txt      the runtime and the build backend at the same versions
#                         (deploy/run.sh, the Dockerfile)
# Extra arguments go to both pip-compile runs, e.g. `--upgrade-package redis` to move one
# package and keep the rest, or `--upgrade` to move everything.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="${TMPDIR:-/tmp}/klondike-race-lock"
[ -x "$tools/bin/pip-compile" ] || {
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check 'pip-tools>=7.4'
}
# lock OUTPUT EXTRA... [-- PIP-COMPILE ARGS]: pyproject.toml's runtime, build backend and
# the extras named; the `# extras:` line tells requirements/sync.py what the lock is for
lock() {
  local out=$1; shift
  local extras=() args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do extras+=(--extra "$1"); shift; done
  [ $# -gt 0 ] && shift && args=("$@")
  CUSTOM_COMPILE_COMMAND="bash requirements/lock.sh" "$tools/bin/pip-compile" -q \
    --strip-extras --generate-hashes --allow-unsafe --all-build-deps \
    --no-emit-index-url --no-emit-find-links --no-emit-trusted-host \
    "${extras[@]}" "${args[@]}" -o "$out" pyproject.toml
  local names=""
  for ((i = 1; i < ${#extras[@]}; i += 2)); do names+=" ${extras[i]}"; done
  sed -i "1i # extras:$names" "$out"
}
lock requirements-dev.txt dev fast -- "$@"
lock requirements.txt -- -c requirements-dev.txt "$@"
echo "locked: requirements-dev.txt and requirements.txt; now run: bash tests/run.sh"
