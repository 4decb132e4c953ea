"""A `machine` id on every sample row (which rented machine it came from) and an index on
(machine, timestamp) for one machine's series; old rows get machine ''.

Revision 0002, after 0001.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add monitor_samples.machine (String(128), not null, '' for old rows) and its index."""
    op.add_column(
        "monitor_samples",
        sa.Column("machine", sa.String(128), nullable=False, server_default=""),
    )
    op.create_index(
        "ix_monitor_samples_machine_timestamp", "monitor_samples", ["machine", "timestamp"]
    )


def downgrade() -> None:
    """Drop the index and the column."""
    op.drop_index("ix_monitor_samples_machine_timestamp", table_name="monitor_samples")
    with op.batch_alter_table("monitor_samples") as batch:
        batch.drop_column("machine")
