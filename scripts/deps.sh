#!/usr/bin/env bash
# kiln/scripts/deps.sh — installs the Debian 12 packages kiln needs, only those missing.
# `deps.sh --test` adds what only the tests use: redis-server, which the remote compile cache
# tests start on a loopback port of their own and stop afterwards (no service is enabled).
#
# Checks each package with dpkg first; when something is missing it runs `apt-get update`
# once and installs just those. Works as root (as on a fresh Debian 12 container) and through
# sudo otherwise. Safe to run again: with everything present it changes nothing.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git ccache  # toolchain
  llvm-19-dev                                                  # CPU code generation (LLVM 19)
  libfmt-dev                                                   # formatting
  libopenblas-dev                                              # matmul library (opened at run time)
  libdnnl-dev ocl-icd-opencl-dev                               # oneDNN: the convolution kernel (its CMake config needs OpenCL)
  libhiredis-dev                                               # shared compile cache on Redis
  libssl-dev                                                   # HMAC-SHA-256 of shared cache entries (libcrypto)
  nlohmann-json3-dev libdlpack-dev libzip-dev                  # checkpoints: safetensors headers, DLPack, .npz
  libgtest-dev libgmock-dev libbenchmark-dev                   # tests and benchmarks
)
if [ "${1:-}" = "--test" ]; then
  packages+=(redis-server)                                     # remote compile cache tests
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "deps: missing ${missing[*]}, and not root with no sudo to install them" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
