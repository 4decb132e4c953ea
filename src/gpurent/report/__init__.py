"""Renderers of result objects: terminal (rich), Markdown, HTML with inline SVG, JSON."""

from gpurent.exports import lazy

_EXPORTS = {
    "Column": "gpurent.report.tables",
    "Point": "gpurent.report.svg",
    "fit_table": "gpurent.report.tables",
    "plan_to_dict": "gpurent.report.plan_json",
    "render_csv": "gpurent.report.plan_csv",
    "render_html": "gpurent.report.plan_html",
    "render_markdown": "gpurent.report.plan_markdown",
    "render_terminal": "gpurent.report.plan_terminal",
    "scatter_svg": "gpurent.report.svg",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
