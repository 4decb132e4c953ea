"""`gpurent vendors`: score GPU providers from evidence, check the network between nodes, work
out SLA credits and audit bills. Each verb lives in its own module and attaches itself here."""

from __future__ import annotations

import typer

vendors_app = typer.Typer(
    help=(
        "Evaluate GPU providers from evidence: the guide's weighted scorecard (hardware 30%, "
        "network 25%, elasticity 20%, cost structure 15%, support 10%), network checks, SLA "
        "credits from outage logs and bill audits."
    ),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def register(app: typer.Typer) -> None:
    """Attach `gpurent vendors` and its verbs to the root app."""
    from gpurent.cli import (
        vendors_bill_cmds,
        vendors_net_cmds,
        vendors_score_cmds,  # noqa: F401  (its import attaches `score`)
    )

    vendors_net_cmds.register(vendors_app)
    vendors_bill_cmds.register(vendors_app)
    app.add_typer(vendors_app, name="vendors")
