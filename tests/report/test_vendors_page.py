"""The vendors scorecard page from the shared templates: the same text as the string-built page
it replaced (tests/report/golden/vendors-example.txt), the shared layout, names escaped."""

from __future__ import annotations

from pathlib import Path

from gpurent import __version__
from tests.conftest import run_cli

from .page_text import page_text

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"


def test_vendors_page_says_what_the_old_page_said(vendors_example_page: str) -> None:
    golden = (GOLDEN / "vendors-example.txt").read_text().strip()
    assert page_text(vendors_example_page) == golden


def test_vendors_page_shares_the_layout(vendors_example_page: str) -> None:
    page = vendors_example_page
    assert page.startswith("<!doctype html>")
    assert '<header class="site"><b>gpurent</b> vendor scorecard</header>' in page
    footer = page[page.index('<footer class="site">') :]
    assert f"gpurent {__version__} · evidence from examples/vendors.toml" in footer
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert page.count("<svg") == 1 and 'tr class="best"' in page


def _example_copy() -> str:
    """examples/vendors.toml with its evidence paths made absolute, to edit and write elsewhere."""
    text = (ROOT / "examples" / "vendors.toml").read_text(encoding="utf-8")
    return text.replace('"vendors/', f'"{(ROOT / "examples" / "vendors").as_posix()}/')


def _page(tmp_path: Path, text: str) -> str:
    vendors = tmp_path / "vendors.toml"
    vendors.write_text(text, encoding="utf-8")
    out = tmp_path / "report.html"
    code, _, err = run_cli("vendors", "score", str(vendors), "--html", str(out))
    assert code == 0, err
    return out.read_text(encoding="utf-8")


def test_a_vendor_named_like_markup_is_text(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    text = _example_copy().replace('name = "Example A"', f'name = "{evil}"')
    page = _page(tmp_path, text)
    assert "<script" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # tables, map, legend
    assert evil in page_text(page)


def test_a_single_vendor_page_has_no_region_map(tmp_path: Path) -> None:
    text = _example_copy()
    page = _page(tmp_path, text[: text.index('[[provider]]\nname = "Example B"')])
    assert "<svg" not in page and "Who wins where" not in page
    assert "Example A" in page_text(page) and "Example B" not in page
