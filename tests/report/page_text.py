"""The visible text of an HTML page, for "same content, any markup" comparisons.

Text inside <style>, <script>, <svg> (charts are compared by their data points), <header> and
<footer> (the shared layout: the page kind, the version and provenance line) is left out;
whitespace is collapsed.
"""

from __future__ import annotations

from html.parser import HTMLParser

_SKIP = {"style", "script", "svg", "header", "footer"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.parts.append(data)


def page_text(page: str) -> str:
    """The words of `page` outside styles, scripts, charts and the footer, one space apart."""
    parser = _Text()
    parser.feed(page)
    parser.close()
    return " ".join(" ".join(parser.parts).split())
