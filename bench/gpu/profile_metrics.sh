#!/bin/bash
# Nsight Compute metrics (stall reasons, instruction and shared-memory counts)
# for one launch of an implementation on one bench case. On the device:
#   bash bench/gpu/profile_metrics.sh CASE IMPL [B]   (writes $OUT/metrics-CASE-IMPL.log)
c=$1; impl=$2; B=${3:-build-final}
m=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
m=$m,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_global_ld.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__thread_inst_executed_per_inst_executed.ratio
m=$m,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,launch__registers_per_thread,launch__occupancy_limit_registers,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected selected lg_throttle no_instruction dispatch_stall branch_resolving tex_throttle drain membar sleeping misc; do
  m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
timeout 120 ncu --clock-control none --metrics $m --launch-skip 2 --launch-count 1 \
  -k regex:'^(nchw|nhwc|stride|generic|direct|row)' $B/bench/gpu/avgpool_gpu_bench --only $c --impl $impl --reps 3 \
  > $OUT/metrics-$c-${impl#cuda:}.log 2>&1
grep -E "^  [a-z_]+|__" $OUT/metrics-$c-${impl#cuda:}.log | sed -E 's/ +/ /g' | grep -vE " 0$| 0\.0[0-9]?$"
