"""${message}

Revision ${up_revision}, after ${down_revision | comma,n}; created ${create_date}.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = None
depends_on = None


def upgrade() -> None:
    """${message}."""
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    """Undo ${up_revision}."""
    ${downgrades if downgrades else "pass"}
