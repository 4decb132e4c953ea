"""The monitor store as gpurent made it before migrations: monitor_samples and monitor_sources.

Revision 0001, the base. A store made by `metadata.create_all` of an older gpurent has exactly
these tables and no alembic_version table; `gpurent.store.upgrade` stamps it at 0001. Frozen:
the column lists are literal, not taken from the live tables.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_FLOATS = (
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
_INTS = (
    "throttle_reasons",
    "pcie_gen",
    "pcie_gen_max",
    "pcie_width",
    "pcie_width_max",
    "ecc_uncorrected",
    "ecc_corrected",
)
_HOST = (
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


def upgrade() -> None:
    """Create monitor_samples (one row per GPU per sample) and monitor_sources."""
    op.create_table(
        "monitor_samples",
        sa.Column("timestamp", sa.Float, nullable=False),
        sa.Column("gpu", sa.Integer, nullable=True),
        sa.Column("gpu_name", sa.String(128), nullable=False),
        sa.Column("gpu_uuid", sa.String(96), nullable=False),
        sa.Column("lost", sa.Boolean, nullable=False),
        *(sa.Column(name, sa.Float, nullable=True) for name in _FLOATS),
        *(sa.Column(name, sa.BigInteger, nullable=True) for name in _INTS),
        sa.Column("xid", sa.String(256), nullable=False),
        *(sa.Column(name, sa.Float, nullable=True) for name in _HOST),
        sa.Column("sources_id", sa.Integer, nullable=False),
    )
    op.create_index("ix_monitor_samples_timestamp", "monitor_samples", ["timestamp"])
    op.create_table(
        "monitor_sources",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("text", sa.Text, nullable=False, unique=True),
    )


def downgrade() -> None:
    """Drop both tables (and every row)."""
    op.drop_table("monitor_sources")
    op.drop_index("ix_monitor_samples_timestamp", table_name="monitor_samples")
    op.drop_table("monitor_samples")
