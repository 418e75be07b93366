"""Benchmarks: dsh-fs workloads side by side with raw-Python baselines (`make bench`).

Every workload runs in a fresh child process, so the peak-RSS growth it reports belongs to
that workload alone, and every ratio compares two measurements taken in the same run on the
same files.
"""
