"""Cloud instance metadata services: where they answer, and how big their answers may be.

Shared by `gpurent.runtime.notices` (interruption notices) and `gpurent.monitor.instance`
(which instance this is). Base URLs are overridable by environment variable (tests, proxies) and
by argument. HTTP goes through the one seam, `gpurent.http` (`DIRECT_HTTP` by default: the
services are link-local, so proxy settings are ignored), with `MAX_BODY_BYTES` and a deadline
for the whole answer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

AWS_BASE_URL = "http://169.254.169.254"
GCP_BASE_URL = "http://metadata.google.internal"
AZURE_BASE_URL = "http://169.254.169.254"
MAX_BODY_BYTES = 64 * 1024  # metadata answers are tiny; more is junk
# Environment variables that point a provider's metadata base URL elsewhere (tests, proxies);
# read by `gpurent run` (notices) and `gpurent monitor --instance auto` (instance detection).
METADATA_URL_ENV = {
    "aws": "GPURENT_AWS_METADATA_URL",
    "gcp": "GPURENT_GCP_METADATA_URL",
    "azure": "GPURENT_AZURE_METADATA_URL",
}


def base_urls_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The metadata base URLs set in the environment, by provider (`aws`, `gcp`, `azure`)."""
    env = os.environ if environ is None else environ
    return {name: env[var] for name, var in METADATA_URL_ENV.items() if env.get(var)}


class JunkAnswerError(ValueError):
    """A metadata service answered something that is not what its documentation says."""
