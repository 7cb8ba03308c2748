#!/usr/bin/env bash
# Builds the Debian packages into build-pkg/packages/ (packaging/README.md): roceconf and
# roceconf-agent, installed under /usr, the Python module for /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${ROCECONF_PACKAGE_BUILD_DIR:-build-pkg}
# The compiler cache, when there is one, makes this a relink after scripts/build.sh or CI's build.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
opts=(-DCMAKE_INSTALL_PREFIX=/usr -DPython3_EXECUTABLE=/usr/bin/python3
  -DROCECONF_PYTHON_INSTALL_DIR=lib/python3/dist-packages)
# A tree of its own needs no tests or benchmarks; an existing tree (CI packages its release tree,
# build/, rather than compiling everything a second time) keeps what it has.
[[ -f $dir/CMakeCache.txt ]] || opts+=(-DROCECONF_TESTS=OFF -DROCECONF_BENCH=OFF)
cmake -S . -B "$dir" -G Ninja "${launcher[@]}" "${opts[@]}" "$@" >/dev/null
cmake --build "$dir"
rm -f "$dir"/packages/*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
ls -l "$dir"/packages/*.deb
