B=build-final
timeout 120 $B/tests/avgpool_gpu_tests --no-version -ts=gpu_small 2>&1 | tail -3
timeout 150 $B/bench/gpu/avgpool_gpu_bench --only f32_nchw --impl cuda:generic --reps 10 2>&1 | grep -E "^k|^glob|^seed" | sed "s/^/generic /"
timeout 150 $B/bench/gpu/avgpool_gpu_bench --only nchw --reps 10 2>&1 | grep -E "^k|^glob|^seed" | sed "s/^/auto /"
