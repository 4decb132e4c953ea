"""Renderers of result objects: terminal (rich), Markdown, HTML with inline SVG, JSON."""

from gpurent.exports import lazy

_EXPORTS = {
    "Column": "gpurent.report.tables",
    "Point": "gpurent.report.charts",
    "fit_table": "gpurent.report.tables",
    "plan_to_dict": "gpurent.report.plan_json",
    "render_csv": "gpurent.report.plan_csv",
    "plan_page": "gpurent.report.html",
    "render_markdown": "gpurent.report.plan_markdown",
    "render_terminal": "gpurent.report.plan_terminal",
    "scatter": "gpurent.report.charts",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
