#!/usr/bin/env bash
# The Python package's tests (tests/python, pytest): the source tree's
# package (python/) on the library this build made, named by AVGPOOL_LIBRARY
# (default ${AVGPOOL_BUILD_DIR:-build}/libavgpool.so: the one scripts/test.sh's
# CTest suites ran, with the CUDA backend where nvcc was found). The venv,
# ${AVGPOOL_BUILD_DIR:-build}/python-venv, gets numpy, pytest and ml_dtypes
# from PyPI and sees the interpreter's own packages (a torch installed there
# is used; the torch tests say they are skipped without one). Arguments go to
# pytest. The installed wheel is tested by scripts/wheel.sh --check (CI's
# wheel stage).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/python.sh
avgpool_install_deps
dir="${AVGPOOL_BUILD_DIR:-build}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
export AVGPOOL_LIBRARY="${AVGPOOL_LIBRARY:-$dir/libavgpool.so}"
[ -e "$AVGPOOL_LIBRARY" ] || { echo "AVGPOOL_LIBRARY=$AVGPOOL_LIBRARY: no such file (build first: scripts/test.sh does)"; exit 1; }
venv="$dir/python-venv"
avgpool_venv "$venv"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
"$venv/bin/python" -c "import avgpool, sys; print('python tests:', sys.version.split()[0], '| avgpool', \
avgpool.__version__, 'from', avgpool.__file__, '| library', avgpool.library_path, '| backends', \
','.join(avgpool.backends()))"
avgpool_pytest "$venv" "$@"
