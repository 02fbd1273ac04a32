"""A class report's page (`report.html`) as a reader meets it: its images, any script element,
and its text, parsed by the standard library's HTML parser."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """Feed it the page; then `images` (each <img>'s attributes), `scripts` (how many <script>
    elements) and `text` (the text between tags, in order)."""

    def __init__(self):
        super().__init__()
        self.images: list[dict] = []
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_data(self, data):
        self.text.append(data)
