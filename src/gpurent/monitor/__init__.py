"""Watching a rented machine: probes (NVML, host), rules and diagnosis, cost meter, exporter.

Submodules are imported where used (`gpurent.monitor.session`, `gpurent.monitor.rules`, ...);
this package itself imports nothing, so `import gpurent.monitor` needs no extra.
"""
