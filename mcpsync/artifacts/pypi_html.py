"""The links of a PEP 503 simple-index page (HTML), for an index that does not speak PEP 691's
JSON. Its own module: html.parser costs 4 ms to import, and JSON indexes (PyPI itself,
pypiserver, uv's) never need it."""

from __future__ import annotations

from html.parser import HTMLParser


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, bool]] = []  # (href, yanked)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        href = found.get("href")
        if tag == "a" and href:
            self.links.append((href, "data-yanked" in found))  # PEP 592


def anchors(page: str) -> list[tuple[str, bool]]:
    """(href, yanked) of every `<a href>` of the page, in order."""
    parser = _Anchors()
    parser.feed(page)
    return parser.links
