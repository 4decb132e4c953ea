"""The fleet tables of `gpurent serve`: machines that push samples (only their token's SHA-256),
budgets per job or project, and the alerts fired at each budget's thresholds.

Revision 0003, after 0002. Literal column lists: this revision is frozen, whatever
`gpurent.store.fleet` becomes later.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create fleet_machines, fleet_budgets and fleet_alerts."""
    op.create_table(
        "fleet_machines",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("job", sa.String(128), nullable=False, server_default=""),
        sa.Column("project", sa.String(128), nullable=False, server_default=""),
        sa.Column("price_usd_per_hour", sa.Float, nullable=True),
        sa.Column("gpu_count", sa.Integer, nullable=True),
        sa.Column("plan_hours", sa.Float, nullable=True),
        sa.Column("plan_cost_usd", sa.Float, nullable=True),
        sa.Column("created_s", sa.Float, nullable=False),
    )
    op.create_table(
        "fleet_budgets",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("limit_usd", sa.Float, nullable=False),
        sa.Column("thresholds", sa.String(256), nullable=False),
        sa.Column("webhook_url", sa.String(2048), nullable=False, server_default=""),
        sa.Column("created_s", sa.Float, nullable=False),
        sa.UniqueConstraint("scope", "name", name="uq_fleet_budgets_scope_name"),
    )
    op.create_table(
        "fleet_alerts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("budget_id", sa.Integer, sa.ForeignKey("fleet_budgets.id"), nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("spend_usd", sa.Float, nullable=False),
        sa.Column("limit_usd", sa.Float, nullable=False),
        sa.Column("fired_s", sa.Float, nullable=False),
        sa.Column("webhook_state", sa.String(256), nullable=False, server_default=""),
        sa.Column("webhook_attempts", sa.Integer, nullable=False, server_default="0"),
        sa.UniqueConstraint("budget_id", "threshold", name="uq_fleet_alerts_budget_threshold"),
    )


def downgrade() -> None:
    """Drop the three tables (alerts first: they point at budgets)."""
    op.drop_table("fleet_alerts")
    op.drop_table("fleet_budgets")
    op.drop_table("fleet_machines")
