B=build-final
timeout 120 $B/tests/avgpool_gpu_tests --no-version -ts=gpu_small 2>&1 | tail -3
for mb in 3 2; do AVGPOOL_EXP_MINB=$mb timeout 100 $B/bench/gpu/avgpool_gpu_bench --only f32_nchw --impl cuda:generic --reps 10 2>&1 | grep -E "^k|^glob" | sed "s/^/minb$mb /"; done
timeout 100 ncu --clock-control none --section SourceCounters --launch-skip 2 --launch-count 1 -k regex:generic -o $OUT/rep $B/bench/gpu/avgpool_gpu_bench --only k5s1p2_f32_nchw_fast --impl cuda:generic --reps 3 > /dev/null 2>&1
ncu -i $OUT/rep.ncu-rep --page source --csv --print-source sass > $OUT/src.csv 2>&1; ls -la $OUT; head -3 $OUT/src.csv
