"""The spot room's data and its edges: the `Trace` type, trace and price-history readers, and
the probe that records a trace."""
