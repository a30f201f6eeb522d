#!/bin/bash
# One device call: GPU tests, benchmark (ours vs read pass vs cuDNN), PyTorch
# comparison; results under $OUT. Usage (from the repository root, with
# the build folder carried, B=build-final by default):
#   bash bench/gpu/device_run.sh [tests|bench|backward|sanitize|profile|portability|sweep|all]
# sweep (not in all): the random-configuration sweep against PyTorch on
# seeds $SWEEP_SEEDS (default "1 2"), bench/gpu/sweep.py; SWEEP_ARGS=--forced
# also times every CUDA implementation per configuration (the data behind
# policy.cu's rules; several times slower).
# portability (not in all): the fat binary's architectures, then the GPU
# suite as an sm_80 and an sm_75 see it (AVGPOOL_CUDA_TREAT_AS_SM).
what=${1:-all}
B=${B:-build-final}
OUT=${OUT:-/tmp/out}
mkdir -p $OUT
CUDNN_DIR=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],'lib'))" 2>/dev/null)
export LD_LIBRARY_PATH=$CUDNN_DIR:$LD_LIBRARY_PATH
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version,memory.used --format=csv | tee $OUT/bench.log
if [[ $what == tests || $what == all ]]; then
  timeout 400 ctest --test-dir $B -L gpu -V 2>&1 | grep -vE "^[0-9]+: *$" | tee $OUT/gpu-tests.log | tail -40
fi
if [[ $what == bench || $what == all ]]; then
  timeout 200 $B/bench/gpu/avgpool_gpu_bench --json $OUT/bench.json --cudnn "$CUDNN_DIR" 2>&1 | tee -a $OUT/bench.log
  for impl in cuda:nchw_stride_eq cuda:nchw_tiled cuda:nchw_row_bulk cuda:nchw_row_stream cuda:nchw_vec_column_walk cuda:nchw_column_walk; do
    timeout 60 $B/bench/gpu/avgpool_gpu_bench --only nchw --impl $impl --reps 10 2>&1 | grep -vE "^device|^cuDNN|^copy" | tee -a $OUT/bench-forced.log
  done
  for impl in cuda:nhwc_column_walk cuda:nhwc_tile_stream; do
    timeout 60 $B/bench/gpu/avgpool_gpu_bench --only nhwc --impl $impl --reps 10 2>&1 | grep -vE "^device|^cuDNN|^copy" | tee -a $OUT/bench-forced.log
  done
  timeout 200 python3 bench/gpu/torch_compare.py $B/libavgpool.so --json $OUT/torch.json 2>&1 | tee $OUT/torch.log
fi
if [[ $what == backward || $what == all ]]; then
  # The backward: AUTO's choice against the read-grad_output + write-grad_input
  # pass and the copy roofline, each implementation forced, and PyTorch.
  timeout 240 $B/bench/gpu/avgpool_gpu_bench --backward --json $OUT/bench-backward.json 2>&1 | tee $OUT/bench-backward.log
  for impl in cuda:backward_as_forward cuda:backward_broadcast cuda:backward_tiles cuda:backward_columns cuda:backward_gather; do
    timeout 120 $B/bench/gpu/avgpool_gpu_bench --backward --impl $impl --reps 10 2>&1 | grep -vE "^device|^backward mode" | tee -a $OUT/bench-backward-forced.log
  done
  timeout 300 python3 bench/gpu/torch_compare.py $B/libavgpool.so --backward --json $OUT/torch-backward.json 2>&1 | tee $OUT/torch-backward.log
fi
if [[ $what == portability ]]; then
  { cuobjdump --list-elf $B/libavgpool.so; cuobjdump --list-ptx $B/libavgpool.so; } 2>&1 | tee $OUT/fatbin.log
  ctest --test-dir $B -R cuda_fatbin -V 2>&1 | grep -E "elf:|ptx:|asks|MISMATCH|Passed|Failed" | tee -a $OUT/fatbin.log
  for sm in 80 75; do
    AVGPOOL_CUDA_TREAT_AS_SM=$sm timeout 400 ctest --test-dir $B -L gpu -V 2>&1 | grep -vE "^[0-9]+: *$" \
      | tee $OUT/gpu-tests-sm$sm.log | tail -25
  done
fi
if [[ $what == sweep ]]; then
  for seed in ${SWEEP_SEEDS:-1 2}; do
    AVGPOOL_LIBRARY=$B/libavgpool.so timeout 300 python3 bench/gpu/sweep.py --seed $seed ${SWEEP_ARGS} \
      --json $OUT/sweep-seed$seed.json 2>&1 | tee $OUT/sweep-seed$seed.log | tail -n 30
  done
fi
if [[ $what == sanitize || $what == all ]]; then
  for tool in memcheck racecheck initcheck; do
    AVGPOOL_GPU_TEST_QUICK=1 timeout 250 compute-sanitizer --tool $tool --error-exitcode 3 \
      $B/tests/avgpool_gpu_tests --no-version -ts=gpu_small > $OUT/$tool.tmp 2>&1
    echo "$tool exit code $?" >> $OUT/$tool.tmp
    tail -n 5 $OUT/$tool.tmp | tee -a $OUT/sanitize.log
    rm -f $OUT/$tool.tmp
  done
fi
if [[ $what == profile ]]; then
  # Nsight Compute on one launch of each named case (PROFILE_CASES, substrings of bench names)
  for c in ${PROFILE_CASES:-k5s1p2 k3s1p1 k3s2p1_ceil}; do
    timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats \
      --launch-skip 3 --launch-count 1 -k regex:'^(nchw|nhwc|stride|generic|direct|row)' \
      $B/bench/gpu/avgpool_gpu_bench --only $c --reps 4 > $OUT/ncu-$c.log 2>&1
    grep -E "^  [a-z_]+_kernel|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\)|Issue Slots Busy|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" $OUT/ncu-$c.log | head -30
  done
fi
