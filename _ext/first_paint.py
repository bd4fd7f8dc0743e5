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
3. The theme preloads its two scripts (`bootstrap.js`, 24 kB compressed, and its own), which it
   runs deferred at the end of the page: a preload fetches them at high priority, beside the
   stylesheets the first paint waits for, and Lighthouse counts a high-priority script as
   render-blocking. Without it they are fetched at a deferred script's low priority, and still
   run when the page is parsed.

One change to the theme's script, once per build: at DOMContentLoaded it gives every code block
and output that scrolls a tab stop, reading each one's `scrollWidth`. For a block inside a closed
`<details>` (a folded cell or dropdown), whose contents are not laid out, that read makes the
browser lay the block out on its own: one forced layout per folded block, about forty on the
longest chapters, which is what Lighthouse's mobile profile counted as blocking time. The patched
script skips blocks inside a closed `<details>` and runs again, as it does after a change to
the page, when one is opened, so an opened block still gets its tab stop.

Images load lazily, when the reader scrolls near them: the chapters' plots far below the first
paragraph and the launch menu's two logos, hidden until the menu opens, were fetched with the
page (23 kB on Fused conv+BN). Measured one cause at a time on that page (issue 27's note), this
saves bytes, not paint time: served over HTTP/1.0 the preloads above moved its largest paint,
and over HTTP/2 neither did. A plot keeps its place before it arrives: its `width` and `height`
are the SVG's own (points, 4/3 of a CSS pixel) or the PNG's pixels, and code-and-math.css lets
a scaled plot keep its ratio.
"""
import re
from pathlib import Path

HEAD = re.compile(r"<head>.*?</head>", re.S)
SEARCH_TOOLS = re.compile(
    r'\s*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>'
)
PLAIN_SCRIPT = re.compile(r'<script (?![^>]*\b(?:defer|async)\b)([^>]*\bsrc="[^"]*"[^>]*)>')


SCRIPT_PRELOAD = re.compile(r'\s*<link rel="preload" as="script"[^>]*>')


def lighter_head(head, search_page):
    if not search_page:
        head = SEARCH_TOOLS.sub("", head)
    head = SCRIPT_PRELOAD.sub("", head)
    return PLAIN_SCRIPT.sub(r'<script defer="defer" \1>', head)


# The theme's scan, as pydata-sphinx-theme 0.17.1 ships it (minified), and a listener on the
# opening of a `<details>` added after its MutationObserver; `t` is the scan, debounced.
SCROLLABLE_SCAN = re.compile(
    r'(document\.querySelectorAll\(\["pre",[^\]]*\]\.join\(", "\)\))'
    r'(\.forEach\(e=>\{e\.tabIndex=e\.scrollWidth>e\.clientWidth)'
)
RESCAN_ON_CHANGE = 'new MutationObserver(t).observe(document.getElementById("main-content"),{subtree:!0,childList:!0})'
RESCAN_ON_TOGGLE = ',document.addEventListener("toggle",t,!0)'  # toggle does not bubble: capture it


def scan_only_open_blocks(script):
    if RESCAN_ON_CHANGE + RESCAN_ON_TOGGLE in script:  # patched by an earlier build
        return script
    if len(SCROLLABLE_SCAN.findall(script)) != 1 or script.count(RESCAN_ON_CHANGE) != 1:
        raise ValueError(
            "_ext/first_paint.py: the theme's scan for scrollable blocks has changed; check whether "
            "it still reads each folded block (issue 27) and update or remove the patch"
        )
    script = SCROLLABLE_SCAN.sub(r'Array.from(\1).filter(e=>!e.closest("details:not([open])"))\2', script)
    return script.replace(RESCAN_ON_CHANGE, RESCAN_ON_CHANGE + RESCAN_ON_TOGGLE)


IMAGE = re.compile(r"<img (?![^>]*\bloading=)([^>]*?)\s*/?>")
SOURCE = re.compile(r'\bsrc="([^"]+)"')
SVG_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"[^>]*?\sheight="([\d.]+)pt"')


def image_size(path):
    """The size of a matplotlib SVG in CSS pixels, or of a PNG in its own pixels (the page may
    scale it, keeping the ratio); None for anything else."""
    if not path.is_file():
        return None
    if path.suffix == ".svg":
        found = SVG_SIZE.search(path.read_text(encoding="utf-8")[:2000])
        return found and tuple(round(float(points) * 4 / 3) for points in found.groups())
    if path.suffix == ".png":
        header = path.read_bytes()[:24]  # signature, then the IHDR chunk: width, height
        if header[12:16] == b"IHDR":
            return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
    return None


def lazy_images(html, page_path):
    def lazy(image):
        attributes = image.group(1)
        source = SOURCE.search(attributes)
        size = source and image_size(page_path.parent / source.group(1))
        if size:
            attributes += f' width="{size[0]}" height="{size[1]}"'
        return f'<img loading="lazy" {attributes} />'

    return IMAGE.sub(lazy, html)


def rewrite_theme_script(outdir):
    path = Path(outdir) / "_static" / "scripts" / "pydata-sphinx-theme.js"
    path.write_text(scan_only_open_blocks(path.read_text(encoding="utf-8")), encoding="utf-8")


def rewrite_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if app.config.html_theme_options.get("search_as_you_type"):
        raise ValueError("_ext/first_paint.py drops the search index from pages: not with search_as_you_type")
    for path in Path(app.outdir).rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        search_page = path.name == "search.html" and path.parent == Path(app.outdir)
        new = HEAD.sub(lambda head: lighter_head(head.group(0), search_page), html, count=1)
        new = lazy_images(new, path)
        if new != html:
            path.write_text(new, encoding="utf-8")
    rewrite_theme_script(app.outdir)


def setup(app):
    app.connect("build-finished", rewrite_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
