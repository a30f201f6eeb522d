#!/usr/bin/env bash
# The Python package's environment, sourced by scripts/python_tests.sh and
# scripts/wheel.sh: a virtual environment with what the tests and the wheel
# build take from PyPI.
avgpool_python_requirements=(numpy pytest ml_dtypes)

# Creates the venv $1 (kept while it works) with a Python 3.9 or newer
# whose venv module works: $AVGPOOL_PYTHON, python3 on PATH, or
# /usr/bin/python3 (with python3-venv, which scripts/deps.sh installs); then
# installs the requirements plus any extra packages given after $1. The venv
# sees the interpreter's own site-packages (a torch installed there is used).
avgpool_venv() {
  local venv="$1" py
  shift
  if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    local candidates=() made=0
    [ -n "${AVGPOOL_PYTHON:-}" ] && candidates+=("$AVGPOOL_PYTHON")
    candidates+=("$(command -v python3 || true)" /usr/bin/python3)
    for py in "${candidates[@]}"; do
      [ -n "$py" ] && [ -x "$py" ] || continue
      "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null || continue
      rm -rf "$venv"
      if "$py" -m venv --system-site-packages "$venv" >/dev/null 2>&1; then
        made=1
        break
      fi
    done
    if ((!made)); then
      rm -rf "$venv"
      echo "no Python 3.9 or newer makes a venv (tried: ${candidates[*]}); on Debian install python3-venv" \
        "(scripts/deps.sh's avgpool_install_deps does)" >&2
      return 1
    fi
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${avgpool_python_requirements[@]}" "$@"
}

# Runs pytest on tests/python with the venv's Python; further arguments go
# to pytest. pytest's "no tests collected" (exit 5) is a failure here.
avgpool_pytest() {
  local venv="$1" rc=0
  shift
  "$venv/bin/python" -m pytest tests/python -q -rs -p no:cacheprovider "$@" || rc=$?
  if [ $rc -eq 5 ]; then
    echo "FAILED: pytest collected no tests in tests/python"
    return 1
  fi
  return $rc
}
