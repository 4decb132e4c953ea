"""The metric columns of a flat monitoring sample row, shared by its writer and its table.

`gpurent.monitor.sample` builds and reads rows with these columns (`COLUMNS` there is the full
layout); `gpurent.store.samples` makes the SQL table from them. Kept outside both rooms so the
store does not import the monitor that writes into it. Standard library only (data, no code).
"""

from __future__ import annotations

GPU_FLOAT_COLUMNS = (
    "sm_util_pct",
    "sm_occupancy_pct",
    "tensor_util_pct",
    "dram_bw_util_pct",
    "gpu_busy_pct",
    "mem_copy_util_pct",
    "memory_used_mib",
    "memory_total_mib",
    "power_w",
    "power_limit_w",
    "temperature_c",
    "sm_clock_mhz",
    "sm_clock_max_mhz",
    "mem_clock_mhz",
    "pcie_tx_mb_per_s",
    "pcie_rx_mb_per_s",
)
GPU_INT_COLUMNS = (
    "throttle_reasons",
    "pcie_gen",
    "pcie_gen_max",
    "pcie_width",
    "pcie_width_max",
    "ecc_uncorrected",
    "ecc_corrected",
)
HOST_COLUMNS = (
    "cpu_util_pct",
    "iowait_pct",
    "memory_used_gib",
    "memory_total_gib",
    "disk_util_pct",
    "disk_read_mb_per_s",
    "disk_write_mb_per_s",
    "net_rx_mb_per_s",
    "net_tx_mb_per_s",
    "data_wait_pct",
)
