"""The `vendors score` report as Markdown."""

from __future__ import annotations

from gpurent.report.vendors_format import Section, header_lines, sections, title
from gpurent.vendors.evaluation import Evaluation


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section_markdown(s: Section) -> str:
    """One section as Markdown: a heading, a table and notes."""
    lines = [f"## {s.title}", ""]
    if s.headers:
        lines.append("| " + " | ".join(_cell(h) for h in s.headers) + " |")
        lines.append("|" + "---|" * len(s.headers))
        for i, row in enumerate(s.rows):
            cells = [_cell(c) for c in row]
            if s.highlight_first and i == 0:
                cells = [f"**{c}**" for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [f"- {_cell(n)}" for n in s.notes]
    if s.notes:
        lines.append("")
    return "\n".join(lines)


def render_markdown(ev: Evaluation) -> str:
    """The vendor report as a Markdown document."""
    parts = [f"# {title(ev)}", "", *(f"{line}  " for line in header_lines(ev)), ""]
    parts += [section_markdown(s) for s in sections(ev)]
    return "\n".join(parts).rstrip() + "\n"
