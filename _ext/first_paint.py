"""What a page's first paint waits for (issue 27: Lighthouse's mobile profile, slow 4G).

The theme's layout puts eleven plain `<script src>` tags in `<head>`: Sphinx's and the
extensions' scripts, and the search tools with the whole search index. A plain script stops the
parser until it has been fetched and run, so the first paint waited for all of them. Two changes,
made to each written page once the build is done:

1. The search tools and index (`searchtools.js`, `language_data.js`, `searchindex.js`) are only
   loaded on every page for the theme's search-as-you-type, which is off (theme.conf's default):
   the search page loads its own copies, and the search box sends the reader there.
2. Every other external script in `<head>` is deferred: it still runs in document order, once the
   page is parsed and before DOMContentLoaded, which is when each of them starts its work. The
   inline scripts in `<head>` only set variables (and the colour mode, which must stay first).
"""
import re
from pathlib import Path

HEAD = re.compile(r"<head>.*?</head>", re.S)
SEARCH_TOOLS = re.compile(
    r'\s*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>'
)
PLAIN_SCRIPT = re.compile(r'<script (?![^>]*\b(?:defer|async)\b)([^>]*\bsrc="[^"]*"[^>]*)>')


def lighter_head(head, search_page):
    if not search_page:
        head = SEARCH_TOOLS.sub("", head)
    return PLAIN_SCRIPT.sub(r'<script defer="defer" \1>', head)


def rewrite_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if app.config.html_theme_options.get("search_as_you_type"):
        raise ValueError("_ext/first_paint.py drops the search index from pages: not with search_as_you_type")
    for path in Path(app.outdir).rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        search_page = path.name == "search.html" and path.parent == Path(app.outdir)
        new = HEAD.sub(lambda head: lighter_head(head.group(0), search_page), html, count=1)
        if new != html:
            path.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("build-finished", rewrite_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
