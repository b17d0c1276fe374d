#!/usr/bin/env bash
# kiln/scripts/test.sh — the whole test suite from a fresh Debian 12 machine: installs what is
# missing (scripts/deps.sh --test, which adds redis-server for the remote cache tests; they
# start and stop their own server), then configures, builds (2 jobs) and runs ctest for the
# `release` preset (-O3, what users run, with the header self-containment check and the
# install test), then the `asan` preset (AddressSanitizer + UndefinedBehaviorSanitizer).
# KILN_DEBUG=1 adds a first pass over the `dev` preset (Debug), KILN_RELEASE=0 skips the
# release pass, KILN_SANITIZE=0 the sanitizer pass; any failure stops the script with a
# non-zero status. docs/building.md says why CI runs these two passes and not a third.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/deps.sh --test

run_preset() {
  local preset=$1 start=$SECONDS
  echo "== kiln: preset ${preset}: configure, build, test"
  cmake --preset "${preset}"
  cmake --build --preset "${preset}"
  ctest --preset "${preset}"
  echo "== kiln: preset ${preset} passed in $((SECONDS - start)) s"
}

if [ "${KILN_DEBUG:-0}" != 0 ]; then
  run_preset dev
fi
if [ "${KILN_RELEASE:-1}" != 0 ]; then
  run_preset release
else
  echo "== kiln: KILN_RELEASE=0: release pass skipped"
fi
if [ "${KILN_SANITIZE:-1}" != 0 ]; then
  run_preset asan
else
  echo "== kiln: KILN_SANITIZE=0: sanitizer pass skipped"
fi
