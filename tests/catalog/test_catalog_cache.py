"""The parsed-catalog cache (issue 15): keyed on path, mtime and size; a corrupt, partial or
unwritable cache is passed over and rebuilt, never trusted and never fatal."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from gpurent.catalog.offer import Offer, ReservedTerm
from gpurent.catalog.offers import OfferTable, SkippedRow
from gpurent.catalog.sources.cache import cached_table
from gpurent.cli.main import app
from gpurent.userdata import cache_home

runner = CliRunner()
HEADER = "provider,instance_type,gpu,gpu_count,region,price_hour_usd,spot_price_hour_usd,as_of\n"


def _catalog(tmp_path: Path, price: str = "98.32") -> Path:
    path = tmp_path / "big.csv"
    rows = [f"aws,p5.48xlarge,H100,8,region-{i:03d},{price},31.5,2026-11-20\n" for i in range(200)]
    path.write_text(HEADER + "".join(rows) + "lambda,x,H100,8,us,,,\n")  # one skipped row
    return path


def _offers(path: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    r = runner.invoke(app, ["offers", "--catalog", str(path), "--limit", "0", "--json"], env=env)
    assert r.exit_code == 0, r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


def _entries() -> list[Path]:
    folder = cache_home() / "catalog"
    return sorted(folder.glob("*.bin")) if folder.exists() else []


def test_second_read_comes_from_the_cache_and_is_identical(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    first = _offers(path)
    entries = _entries()
    assert len(entries) == 1
    stamp = entries[0].stat().st_mtime_ns
    second = _offers(path)
    assert second == first and first["matching"] == 200
    assert entries[0].stat().st_mtime_ns == stamp  # read, not rewritten
    r = runner.invoke(app, ["offers", "--catalog", str(path)])
    assert "skipped" in r.stderr  # the skipped row is still reported from the cache


def test_a_changed_file_is_parsed_again(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    _offers(path)
    stat = path.stat()
    path.write_text(path.read_text().replace("98.32", "77.77"))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    offers = _offers(path)["offers"]
    assert isinstance(offers, list) and {o["price_usd_per_hour"] for o in offers} == {77.77}
    assert len(_entries()) == 1  # the entry for this path was replaced, not added to


def test_corrupt_or_partial_cache_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    path = _catalog(tmp_path)
    good = _offers(path)
    (entry,) = _entries()
    whole = entry.read_bytes()
    for broken in (whole[: len(whole) // 2], b"garbage", b"", whole[:-1] + b"\x00"):
        entry.write_bytes(broken)
        assert _offers(path) == good
        assert entry.read_bytes() == whole  # rebuilt, atomically, to the same bytes


def test_unwritable_cache_dir_does_not_stop_a_command(tmp_path: Path) -> None:
    cache_home().parent.mkdir(parents=True, exist_ok=True)
    cache_home().write_text("not a folder")  # mkdir under it fails
    assert _offers(_catalog(tmp_path))["matching"] == 200


def test_cache_can_be_turned_off(tmp_path: Path) -> None:
    _offers(_catalog(tmp_path), env={"GPURENT_NO_CACHE": "1"})
    assert _entries() == []


def test_every_offer_field_round_trips_through_the_cache(tmp_path: Path) -> None:
    """Offers read back from an entry equal the parsed ones field by field, tuples as tuples,
    reserved terms as ReservedTerm (no source fills them all yet, so the table is built here)."""
    full = Offer(
        provider="aws",
        instance_type="p5.48xlarge",
        region="us-east-1",
        gpu_name="H100",
        gpu_count=8,
        gpu_memory_gib=80.0,
        vcpus=192.0,
        memory_gib=2048.0,
        price_usd_per_hour=98.32,
        spot_price_usd_per_hour=31.5,
        spot_price_max_usd_per_hour=40.0,
        zones=("us-east-1a", "us-east-1b"),
        zone_count=2,
        local_disk_gb=30400.0,
        network_gbps=3200.0,
        gpu_interconnect="NVLink4",
        reserved=(
            ReservedTerm(term_months=12, price_usd_per_hour=60.0),
            ReservedTerm(term_months=36, price_usd_per_hour=40.0, upfront="all"),
        ),
        billing_granularity_s=60,
        as_of="2026-11-20",
        source="test",
        notes="a note",
        extra=(("tier", "secure"), ("k", "v")),
    )
    bare = Offer(
        provider="lambda",
        instance_type="gpu_1x_a100",
        region="us-west-1",
        gpu_name="A100-80GB",
        gpu_count=1,
        gpu_memory_gib=80.0,
        vcpus=None,
        memory_gib=None,
        price_usd_per_hour=None,
    )
    table = OfferTable(
        offers=(full, bare, full),
        skipped=(SkippedRow(file="f.csv", line=3, reason="no price"),),
        source="test",
        notes=("one note",),
        format="plain",
    )
    path = tmp_path / "any.csv"
    path.write_text("anything")
    parses: list[int] = []

    def parse() -> OfferTable:
        parses.append(1)
        return table

    assert cached_table(path, ("p",), parse, tmp_path / "cache") == table
    again = cached_table(path, ("p",), parse, tmp_path / "cache")
    assert parses == [1]  # the second came from the entry
    assert again == table
    for got, want in zip(again.offers, table.offers, strict=True):
        for name in ("zones", "reserved", "extra"):
            assert type(getattr(got, name)) is tuple
        assert all(type(t) is ReservedTerm for t in got.reserved)
        assert all(type(pair) is tuple for pair in got.extra)
        assert hash(got) == hash(want)
