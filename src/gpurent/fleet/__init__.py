"""Fleets on Ray: run `gpurent bench --quick` and the runtime's health checks on every node of a
Ray cluster, rank the nodes, flag the one to replace, and measure all-reduce across nodes.

`rank` is pure (figures in, ranking and outliers out); `node` is what runs on each node (the
bench CLI in a subprocess, the health checks, one all-reduce rank); `ray_edge` is the only
module that calls Ray; `report` renders tables. Only the CLI imports this room.
"""
