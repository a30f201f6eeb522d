#!/usr/bin/env bash
# The Python package's tests (tests/python, pytest), in the venv
# ${AVGPOOL_BUILD_DIR:-build}/python-venv (numpy, pytest and ml_dtypes from
# PyPI; a torch installed with the interpreter is seen, and the torch tests
# say they are skipped without one). Arguments go to pytest.
#   default:             builds the wheel (scripts/wheel.sh: CUDA backend when
#                        nvcc is found, as the main build), installs it into
#                        the venv and tests the installed package
#   AVGPOOL_LIBRARY=lib  no wheel: the source tree's package (python/) on the
#                        library lib, e.g. build/libavgpool.so
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/python.sh
avgpool_install_deps
venv="${AVGPOOL_BUILD_DIR:-build}/python-venv"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
if [ -n "${AVGPOOL_LIBRARY:-}" ]; then
  [ -e "$AVGPOOL_LIBRARY" ] || { echo "AVGPOOL_LIBRARY=$AVGPOOL_LIBRARY: no such file"; exit 1; }
  avgpool_venv "$venv"
  export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
else
  bash scripts/wheel.sh
  avgpool_venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps dist/avgpool-*-py3-none-*.whl
fi
(cd / && "$venv/bin/python" -c "import avgpool, sys; print('python tests:', sys.version.split()[0], \
'| avgpool', avgpool.__version__, 'from', avgpool.__file__, '| library', avgpool.library_path, \
'| backends', ','.join(avgpool.backends()))")
avgpool_pytest "$venv" "$@"
