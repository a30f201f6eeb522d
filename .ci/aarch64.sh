#!/usr/bin/env bash
# CI stage "aarch64": the library and the CPU test suite built for 64-bit Arm
# with Debian's cross toolchain (cmake/toolchains/aarch64-linux-gnu.cmake:
# g++-aarch64-linux-gnu, whose libgomp is the OpenMP; Eigen and doctest are
# header-only) and run under qemu-user, which CTest puts in front of each
# test program. No x86 SIMD kernel is compiled there: the CPU backend is the
# portable base kernels. Build folder: build-aarch64/.
#   AARCH64_TESTS=full   the whole cpu suite (the default)
#   AARCH64_TESTS=quick  the API, semantics and golden tests only (-tce
#                        excludes the long random sweeps)
# CI_JOBS sets the parallelism (2).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
avgpool_packages+=(g++-aarch64-linux-gnu qemu-user)
[ -n "${AVGPOOL_SKIP_DEPS:-}" ] || avgpool_install_deps >/dev/null || echo "WARNING: could not install the dependencies"
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (Debian: g++-aarch64-linux-gnu, qemu-user)"; exit 1; }
done

dir=build-aarch64
log="$dir/stage.log"
rm -rf "$dir" && mkdir -p "$dir"
t0=$SECONDS
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DAVGPOOL_WITH_CUDA=OFF -DAVGPOOL_BUILD_BENCH=OFF -DAVGPOOL_BUILD_CLI=OFF >"$log" 2>&1 ||
  { tail -30 "$log"; exit 1; }
cmake --build "$dir" --parallel "${CI_JOBS:-2}" --target avgpool_tests avgpool_example_c avgpool_example_cpp \
  >>"$log" 2>&1 || { grep -E -A8 "error|FAILED" "$log" | head -40; exit 1; }
echo "cross build: $((SECONDS - t0)) s"
file "$dir/tests/avgpool_tests" 2>/dev/null | grep -q "ARM aarch64" ||
  readelf -h "$dir/tests/avgpool_tests" | grep -q "AArch64" || { echo "FAIL: not an aarch64 binary"; exit 1; }
# Not one x86 kernel in the library: the AVX sources are x86-only.
if grep -q "kernels_avx" "$dir/build.ninja"; then echo "FAIL: x86 kernels compiled for aarch64"; exit 1; fi
echo "aarch64 binaries, base kernels only: ok"

t1=$SECONDS
if [ "${AARCH64_TESTS:-full}" = quick ]; then
  # the examples, then the cpu suite less its random sweeps
  ctest --test-dir "$dir" -R "^example_" --output-on-failure || exit 1
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/tests/avgpool_tests" --test-suite=cpu --no-version \
    --test-case-exclude="*random*"
else
  ctest --test-dir "$dir" -L cpu -LE large --output-on-failure
fi
rc=$?
echo "tests under qemu: $((SECONDS - t1)) s"
exit $rc
