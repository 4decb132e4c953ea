"""Provider evaluation: the guide's weighted scorecard from evidence (bench results, network
checks, scale-out timings, prices and hidden costs, support and contract terms), SLA credits from
outage logs, and bill audits against the catalog and the monitor's records."""

__all__: list[str] = []  # the verbs attach their modules here as they are built
