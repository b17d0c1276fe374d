#!/usr/bin/env bash
# kiln/scripts/demo.sh — the main job from a fresh Debian 12 machine: installs what is
# missing (scripts/deps.sh), configures the `release` preset (CMake + Ninja, ccache when
# present), builds the kiln command-line tool with 2 jobs and runs `kiln demo`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/deps.sh
cmake --preset release
cmake --build --preset release --target kiln_cli
./build/release/kiln demo
