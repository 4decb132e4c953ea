"""Which cloud instance this is, from the cloud's metadata service (`monitor --instance auto`).

Asked in order, each with a short timeout; the first that answers wins:

- AWS IMDSv2: `PUT /latest/api/token` (header `X-aws-ec2-metadata-token-ttl-seconds`), then
  `GET /latest/meta-data/instance-type` and `/latest/meta-data/placement/region` with
  `X-aws-ec2-metadata-token`.
- GCP: `GET /computeMetadata/v1/instance/machine-type` and `/instance/zone` with
  `Metadata-Flavor: Google`; values are paths (`projects/123/machineTypes/a2-highgpu-1g`,
  `projects/123/zones/us-central1-a`): the last part is kept, the region is the zone less its
  last `-x`.
- Azure IMDS: `GET /metadata/instance/compute?api-version=2021-02-01` with `Metadata: true`:
  JSON with `vmSize` and `location`.

Network errors, HTTP errors and answers that do not parse never raise: that provider is
skipped, and a machine without any metadata service (a laptop) gets None. A base URL whose
server could not be reached is not asked again (AWS and Azure share 169.254.169.254), so a
laptop waits about two timeouts, plus the name lookup of GCP's host. HTTP goes through the
one seam, `gpurent.http` (`DIRECT_HTTP` by default: proxies ignored), base URLs default to the
constants of `gpurent.cloud.metadata` and `base_urls_from_env` reads the same variables as
`gpurent run`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from gpurent.catalog import Offer
from gpurent.cloud.metadata import (
    AWS_BASE_URL,
    AZURE_BASE_URL,
    GCP_BASE_URL,
    MAX_BODY_BYTES,
)
from gpurent.errors import InputError, NotFoundError
from gpurent.http import DIRECT_HTTP, Http, HttpError
from gpurent.monitor.cost import InstancePrice, price_from_catalog

log = logging.getLogger("gpurent.monitor")

DEFAULT_TIMEOUT_S = 0.5
AWS_TOKEN_TTL_S = 60  # one detection needs the token for a moment only
AZURE_API_VERSION = "2021-02-01"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")  # instance types, regions, zones


@dataclass(frozen=True, slots=True, kw_only=True)
class DetectedInstance:
    """The cloud instance the monitor runs on, as its metadata service or the user named it."""

    provider: str  # as the catalog names it: aws, gcp, azure
    instance_type: str
    region: str | None  # None when the service did not say
    source: str  # which service answered, and where

    def describe(self) -> str:
        """The instance in one line: provider, type, region and where that came from."""
        where = f" in {self.region}" if self.region else ""
        return f"{self.provider} {self.instance_type}{where} (from {self.source})"


class _UnreachableError(Exception):
    """The server behind a base URL could not be reached: ask it nothing more."""


class _Client:
    """`Http` with its errors turned into `_UnreachableError`."""

    def __init__(self, http: Http, timeout_s: float) -> None:
        self._http = http
        self._timeout_s = timeout_s

    def text(self, method: str, url: str, headers: Mapping[str, str]) -> str | None:
        """The body of a 200 answer as text; None for any other answer or an undecodable body."""
        try:
            answer = self._http.request(
                method,
                url,
                headers=headers,
                timeout_s=self._timeout_s,
                deadline_s=self._timeout_s,
                max_bytes=MAX_BODY_BYTES,
            )
        except HttpError as exc:  # refused, timed out, no route, bad URL, not HTTP, too big
            raise _UnreachableError(exc.message) from None
        status, body = answer.status, answer.body
        if status != 200:
            log.debug("metadata %s %s: HTTP %s", method, url, status)
            return None
        try:
            return body.decode("utf-8").strip()
        except UnicodeDecodeError:
            return None


def _name(text: str | None) -> str | None:
    """`text` if it looks like an instance type, region or zone; else None."""
    return text if text is not None and _NAME.fullmatch(text) else None


def _last_part(text: str | None) -> str | None:
    return None if text is None else _name(text.rsplit("/", 1)[-1])


def _aws(client: _Client, base: str) -> DetectedInstance | None:
    token = client.text(
        "PUT",
        f"{base}/latest/api/token",
        {"X-aws-ec2-metadata-token-ttl-seconds": str(AWS_TOKEN_TTL_S)},
    )
    if not token or not token.isprintable():  # a header value cannot hold a line break
        return None
    headers = {"X-aws-ec2-metadata-token": token}
    instance_type = _name(client.text("GET", f"{base}/latest/meta-data/instance-type", headers))
    if instance_type is None:
        return None
    region = _name(client.text("GET", f"{base}/latest/meta-data/placement/region", headers))
    return DetectedInstance(
        provider="aws", instance_type=instance_type, region=region, source=f"AWS IMDSv2 at {base}"
    )


def gcp_region(zone: str) -> str | None:
    """`us-central1-a` -> `us-central1`; None for a zone without a `-x` suffix."""
    region, sep, suffix = zone.rpartition("-")
    return region if sep and region and suffix else None


def _gcp(client: _Client, base: str) -> DetectedInstance | None:
    headers = {"Metadata-Flavor": "Google"}
    path = f"{base}/computeMetadata/v1/instance"
    machine_type = _last_part(client.text("GET", f"{path}/machine-type", headers))
    if machine_type is None:
        return None
    zone = _last_part(client.text("GET", f"{path}/zone", headers))
    return DetectedInstance(
        provider="gcp",
        instance_type=machine_type,
        region=gcp_region(zone) if zone else None,
        source=f"GCP metadata server at {base}",
    )


def _azure(client: _Client, base: str) -> DetectedInstance | None:
    url = f"{base}/metadata/instance/compute?api-version={AZURE_API_VERSION}"
    text = client.text("GET", url, {"Metadata": "true"})
    if text is None:
        return None
    try:
        compute = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(compute, dict):
        return None
    vm_size, location = compute.get("vmSize"), compute.get("location")
    instance_type = _name(vm_size) if isinstance(vm_size, str) else None
    if instance_type is None:
        return None
    return DetectedInstance(
        provider="azure",
        instance_type=instance_type,
        region=_name(location) if isinstance(location, str) else None,
        source=f"Azure IMDS at {base}",
    )


_PROBES: tuple[tuple[str, str, Callable[[_Client, str], DetectedInstance | None]], ...] = (
    ("aws", AWS_BASE_URL, _aws),
    ("gcp", GCP_BASE_URL, _gcp),
    ("azure", AZURE_BASE_URL, _azure),
)


def detect_instance(
    *,
    http: Http = DIRECT_HTTP,
    base_urls: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> DetectedInstance | None:
    """The instance this process runs on, from AWS, GCP or Azure metadata (in that order);
    None when no metadata service answers with an instance type. Never raises on network
    errors. `base_urls` maps `aws`/`gcp`/`azure` to a base URL (default: the real services)."""
    urls = dict(base_urls or {})
    client = _Client(http, timeout_s)
    unreachable: set[str] = set()
    for name, default, probe in _PROBES:
        base = urls.get(name, default).rstrip("/")
        if base in unreachable:
            continue
        try:
            found = probe(client, base)
        except _UnreachableError as exc:
            log.debug("metadata %s unreachable: %s", name, exc)
            unreachable.add(base)
            continue
        if found is not None:
            return found
    return None


def price_detected(offers: Sequence[Offer], detected: DetectedInstance) -> InstancePrice:
    """The catalog price of a detected instance: in its region when the catalog prices it there,
    else the cheapest region of that type (the label says the detected region is not priced)."""
    in_region = detected.region is not None and any(
        o.provider.lower() == detected.provider
        and o.instance_type.lower() == detected.instance_type.lower()
        and o.region.lower() == detected.region.lower()
        and o.price_usd_per_hour is not None
        for o in offers
    )
    try:
        price = price_from_catalog(
            offers,
            detected.instance_type,
            provider=detected.provider,
            region=detected.region if in_region else None,
        )
    except NotFoundError:
        raise InputError(
            f"the detected instance type {detected.instance_type!r} ({detected.provider}) is "
            "not in the catalog; run `gpurent catalog update` or give --price-usd-per-hour"
        ) from None
    except InputError as exc:  # sold by another provider only, or no on-demand price
        raise InputError(f"detected {detected.describe()}: {exc.message}") from None
    if detected.region is not None and not in_region:
        label = f"{price.label}; detected region {detected.region} has no catalog price"
        price = replace(price, label=label)
    return price
