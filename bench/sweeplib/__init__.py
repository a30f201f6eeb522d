"""What the random-configuration sweeps (bench/gpu/sweep.py, bench/cpu/sweep.py)
share: the seeded configuration generator (configs) and the table and
summary lines (report)."""
