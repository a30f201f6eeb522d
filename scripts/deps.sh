#!/usr/bin/env bash
# Installs the build dependencies from Debian's packages when any is missing.
# Sourced by scripts/run.sh, scripts/test.sh and .ci/run.
avgpool_packages=(cmake ninja-build g++ doctest-dev libeigen3-dev libbenchmark-dev libdnnl-dev
                  ocl-icd-opencl-dev opencl-c-headers)
# Every CMake package the configure looks for, by our find_package calls or
# by those inside another package's CMake config, and the packages above that
# provide it ("-": not a Debian package). .ci/check_deps records every
# find_package of a configure and fails on a package missing here.
avgpool_cmake_packages=(
  "Eigen3 libeigen3-dev"
  "OpenMP g++"                                  # libgomp comes with GCC
  "doctest doctest-dev"
  "benchmark libbenchmark-dev"                  # optional: bench/cpu
  "Threads g++"                                 # from benchmark's config
  "dnnl libdnnl-dev"                            # optional: bench/cpu's oneDNN anchor
  "OpenCL ocl-icd-opencl-dev opencl-c-headers"  # from oneDNN's config: find_package(OpenCL REQUIRED);
                                                # libdnnl-dev only recommends them
  "CUDAToolkit -"                               # with nvcc only: NVIDIA's CUDA toolkit
)
avgpool_install_deps() {
  local missing=()
  for p in "${avgpool_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}
# Configures and builds into ${AVGPOOL_BUILD_DIR:-build} (Release; CUDA when nvcc is found).
avgpool_build() {
  local dir="${AVGPOOL_BUILD_DIR:-build}"
  [ -x /usr/local/cuda/bin/nvcc ] && case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) PATH="$PATH:/usr/local/cuda/bin";; esac
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$dir" --parallel
}
# The Python tests' venv (scripts/python.sh): Debian's python3 makes venvs
# only with python3-venv (ensurepip).
avgpool_packages+=(python3-venv)
