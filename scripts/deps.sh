#!/usr/bin/env bash
# Installs the build dependencies from Debian's packages when any is missing.
# Sourced by scripts/run.sh, scripts/test.sh and .ci/run.
avgpool_packages=(cmake ninja-build g++ doctest-dev libeigen3-dev libbenchmark-dev libdnnl-dev)
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
