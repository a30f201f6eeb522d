#!/usr/bin/env bash
# Builds the libFuzzer target with clang (ASan + UBSan), writes the seed
# corpus from the golden cases, fuzzes for FUZZ_SECONDS (default 60) and
# prints a summary (executions, executions per second, corpus, coverage).
#   bash fuzz/run.sh [seconds]        env: FUZZ_BUILD_DIR (build-fuzz), AVGPOOL_GOLDEN
# Reproduce a crash: build-fuzz/avgpool_fuzz build-fuzz/artifacts/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-60}}"
dir="${FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${FUZZ_BUILD_JOBS:-2}"

CC=clang CXX=clang++ cmake -S fuzz -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" --parallel "$jobs"

golden="${AVGPOOL_GOLDEN:-}"
for g in "$golden" "$dir/avgpool/golden/pytorch_avgpool2d.golden" tests/data/pytorch_avgpool2d.golden; do
  [ -n "$g" ] && [ -f "$g" ] && { golden="$g"; break; }
done
rm -rf "$dir/seeds" && mkdir -p "$dir/seeds" "$dir/corpus" "$dir/artifacts"
if [ -f "$golden" ]; then
  "$dir/avgpool_fuzz_seeds" "$golden" "$dir/seeds"
else
  echo "WARNING: no golden file found: fuzzing from an empty corpus"
fi

# Replay every input that once made the fuzzer fail (their bugs are fixed;
# strict: no tolerated failure class).
if ls fuzz/regressions/* >/dev/null 2>&1; then
  AVGPOOL_FUZZ_STRICT=1 OMP_NUM_THREADS=1 "$dir/avgpool_fuzz" $(ls fuzz/regressions/* | grep -v README) \
    >"$dir/regressions.log" 2>&1 || { echo "FUZZER REGRESSION:"; tail -40 "$dir/regressions.log"; exit 1; }
  echo "regressions replayed: $(ls fuzz/regressions | grep -vc README)"
fi

log="$dir/fuzz.log"
set +e
# One worker thread per call keeps executions fast; the CPU backend's
# parallel split is the same code with one thread (tests cover the teams).
OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$dir/avgpool_fuzz" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
  "$dir/corpus" "$dir/seeds" >"$log" 2>&1
rc=$?
set -e
stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
echo "fuzz: ${seconds} s, exit $rc"
echo "  executions:      $(stat number_of_executed_units)"
echo "  executions/s:    $(stat average_exec_per_sec)"
echo "  new units added: $(stat new_units_added)"
echo "  peak RSS (MB):   $(stat peak_rss_mb)"
echo "  seeds:           $(ls "$dir/seeds" | wc -l), corpus now $(ls "$dir/corpus" | wc -l) files"
echo "  last status:     $last"
if [ $rc -ne 0 ]; then
  echo "FUZZER FAILED: the end of $log:"
  tail -40 "$log"
  ls -l "$dir/artifacts"
fi
exit $rc
