"""The site as a reader meets it: built once from a clean _build with warnings as errors, then
checked as files (links, anchors, icons) and in headless Chromium at the book's desktop width
(console, requests, page weight against a stock Jupyter Book, graphs in light and dark mode,
launch and download links, code that fits its column, search, accessibility), and at a phone's
width (layout, graphs in light and dark mode, accessibility).

Speed (issue 16): the build starts in the background while the notebooks run (conftest.py), and
each page is its own unit of work for pytest-xdist (conftest.work_unit), so the pages spread
over the workers. All checks of a page share one load of it (`seen`): the light-mode checks
first, then the theme's button switches it to dark mode for the dark-mode checks; a check at
a phone's width resizes the window of that same load.
"""
import collections
import functools
import json
import os
import re
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest
import yaml

import icon_fonts  # _ext/, on the path by conftest.py
import reading_time
import routes
from book_files import toc_pages
from conftest import (
    AUDIT_REPORT, CODE_WIDTH_REPORT, PAGE_WEIGHT_REPORT, ROOT, STOCK_ENTRY, record_page_figure,
)
from site_support import (
    CHROMIUM, CHROMIUM_ARGS, HTML, PHONE, STOCK, STOCK_PAGE, VIEWPORT, WEIGHT_BUDGET_RATIO, WIDTHS, PageVisit,
    WAIT_FOR_STILLNESS, accessibility_violations, locked,
    page_url, page_weight, parsed_page, serve, wait_for_build, RUN_DIR,
)


PAGES = toc_pages()
NOTEBOOK_PAGES = [page for page in PAGES if (ROOT / f"{page}.ipynb").exists()]
# PEP 8's limit, to which the chapters' code is formatted (ruff, pyproject.toml).
CODE_COLUMNS = 79


def read_notebook(page):
    return nbformat.read(ROOT / f"{page}.ipynb", as_version=4)


@pytest.fixture(scope="session")
def build():
    return wait_for_build("site")


@pytest.fixture(scope="session")
def site(build):
    if build[0] != 0:
        pytest.fail("the site did not build; see test_site_builds_with_warnings_as_errors")
    return HTML


def test_site_builds_with_warnings_as_errors(build):
    # -W turns every warning into a non-zero exit, so the exit code is the whole verdict.
    code, log = build
    assert code == 0, log[-8000:]


def graph_outputs(notebook):
    """How many graphs (inline SVGs with a text alternative) the notebook's stored outputs hold;
    one output may hold several (two drawings side by side)."""
    return sum(
        output.get("data", {}).get("text/html", "").count('<svg role="img"')
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_chapter_page_shows_its_stored_outputs(site, page):
    notebook = read_notebook(page)
    html = (site / f"{page}.html").read_text()
    # Every graph stored in the notebook is on its page, inline, as stored (not re-executed).
    assert html.count('<svg role="img" aria-label=') == graph_outputs(notebook)
    # Every plot (an image output) says in words what it shows: myst-nb's default alt text is
    # the image's file name, a hash, which is what a screen reader would read.
    plots = parsed_page(site / f"{page}.html").select("div.cell_output img")
    unnamed = [plot["src"] for plot in plots if len(plot.get("alt", "").split()) < 8]
    assert unnamed == [], f"set the cell's mystnb.image.alt metadata: {unnamed}"
    provenance = notebook.metadata["provenance"]
    assert f"produced with torch {provenance['torch']} on {provenance['date']}" in html
    # The reading time under the title, from what the page shows (_ext/reading_time.py).
    minutes = max(1, round(reading_time.minutes(notebook.cells)))
    assert f"About {minutes} minutes to read." in html


def test_the_intro_shows_the_routes_and_each_chapter_its_place_on_them(site):
    intro = (site / "book/intro.html").read_text()
    assert '<div class="routes-diagram"><svg role="img" aria-label="' in intro
    for route in routes.ROUTES:
        minutes = round(routes.route_minutes(ROOT, route))
        assert f"{route['name']}</strong>" in intro and f"about {minutes} minutes" in intro
        for docname, _ in route["steps"]:
            chapter = (site / f"{docname}.html").read_text()
            assert "On the route" in chapter and f"<em>{route['name']}</em>" in chapter, docname


def internal_links(page_path):
    for tag in parsed_page(page_path).find_all(["a", "link", "img", "script"]):
        target = tag.get("href") or tag.get("src")
        if target and not urlparse(target).scheme and not target.startswith(("//", "mailto:")):
            yield target


@functools.cache
def anchors_of(page_path):
    soup = parsed_page(page_path)
    return {tag["id"] for tag in soup.find_all(id=True)} | {
        tag["name"] for tag in soup.find_all("a", attrs={"name": True})
    }


def test_no_broken_internal_links_or_anchors(site):
    broken = []
    # _static holds theme template fragments, not pages.
    pages = [path for path in sorted(site.rglob("*.html")) if "_static" not in path.parts]
    assert len(pages) >= len(PAGES)
    for page_path in pages:
        for target in internal_links(page_path):
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part.split("?")[0])
            target_path = (page_path.parent / path_part).resolve() if path_part else page_path
            if target_path.is_dir():
                target_path = target_path / "index.html"
            if not target_path.exists():
                broken.append(f"{page_path.relative_to(site)} -> {target}")
            elif anchor and target_path.suffix == ".html" and anchor not in anchors_of(target_path):
                broken.append(f"{page_path.relative_to(site)} -> {target} (no such anchor)")
    assert broken == []


def test_nothing_in_head_waits_for_a_script(site):
    """No page's first paint waits for a script (_ext/first_paint.py, issue 27): every external
    script in <head> is deferred or async, none is preloaded beside the stylesheets, and only
    the search page loads the search index."""
    for page_path in sorted(site.rglob("*.html")):
        if "_static" in page_path.parts:
            continue
        page = parsed_page(page_path)
        head = page.head or page  # the site's index.html is a bare redirect, with no <head>
        scripts = [tag for tag in head.find_all("script") if tag.get("src")]
        blocking = [tag["src"] for tag in scripts if not (tag.has_attr("defer") or tag.has_attr("async"))]
        assert blocking == [], f"{page_path.relative_to(site)}: {blocking}"
        preloaded = head.select('link[rel="preload"][as="script"]')
        assert preloaded == [], f"{page_path.relative_to(site)}: {preloaded}"
        loads_index = any(tag["src"].endswith("searchindex.js") for tag in scripts)
        assert loads_index == (page_path.relative_to(site).as_posix() == "search.html"), page_path


@functools.cache
def theme_icon_rules():
    """{icon class: code point} of the theme's own stylesheet, as installed."""
    import pydata_sphinx_theme

    css = Path(pydata_sphinx_theme.__file__).parent / "theme/pydata_sphinx_theme/static/styles/pydata-sphinx-theme.css"
    return icon_fonts.icon_code_points(css.read_text())


@functools.cache
def icon_glyphs(site):
    """({icon class: code point}, code points of the solid font, of the brands font)."""
    from fontTools.ttLib import TTFont

    code_points = icon_fonts.icon_code_points((site / "_static/styles/pydata-sphinx-theme.css").read_text())
    fonts = site / "_static/vendor/fontawesome/webfonts"
    return (
        code_points,
        set(TTFont(fonts / "fa-solid-900.woff2").getBestCmap()),
        set(TTFont(fonts / "fa-brands-400.woff2").getBestCmap()),
    )


@pytest.mark.parametrize("page", PAGES)
def test_every_icon_has_its_glyph_in_the_served_font(site, page):
    """The theme's icons come from subset web fonts (_ext/icon_fonts.py): every icon class a
    page names must have its glyph in the font that draws it."""
    code_points, solid, brands = icon_glyphs(site)
    html = (site / f"{page}.html").read_text()
    icons = [classes.split() for classes in re.findall(r'<(?:i|span) class="([^"]*\bfa-[^"]*)"', html)]
    assert icons, "no icon found: the theme's markup changed?"
    # The served stylesheet keeps the rule of every icon the page names that the theme draws.
    named = {name for classes in icons for name in classes}
    assert (named & set(theme_icon_rules())) - set(code_points) == set()
    missing = []
    for classes in icons:
        font = brands if {"fab", "fa-brands"} & set(classes) else solid
        missing += [name for name in classes if name in code_points and code_points[name] not in font]
    assert missing == []
    assert not (site / "_static/scripts/fontawesome.js").exists()


# ---- In the browser ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Chromium is not installed: apt-get install chromium")
        pytest.skip("Chromium is not installed (apt-get install chromium); browser tests need it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def server(site):
    with serve(site) as url:
        yield url


class OneLoadPerPage:
    """The visit of the page under test, kept while the tests of that page run (they run one
    after the other on one worker: conftest.work_unit)."""

    def __init__(self):
        self.page, self.visit = None, None

    def get(self, browser, server, page):
        if self.page != page:
            self.close()
            self.visit = PageVisit(browser, page_url(server, page))
            self.page = page
        return self.visit

    def close(self):
        if self.visit:
            self.visit.close()
        self.page, self.visit = None, None


@pytest.fixture(scope="session")
def visits(browser):
    loads = OneLoadPerPage()
    yield loads
    loads.close()


@pytest.fixture
def seen(request, visits, browser, server, page):
    """The page's shared load, at the test's `width` parameter (the desktop's if it has none)."""
    visit = visits.get(browser, server, page)
    visit.set_width(request.node.callspec.params.get("width", "desktop"))
    yield visit
    # A check that failed may have left the page half-way (a mode switch, a script cut off by
    # its deadline): the page's next check starts from a fresh load instead.
    if getattr(request.node, "failed_call", False):
        visits.close()


@pytest.fixture(scope="session")
def stock_weight(browser):
    """The stock Jupyter Book notebook page's weight, measured the same way as ours; computed
    once per run by whichever worker needs it first."""
    code, log = wait_for_build("stock")
    assert code == 0, f"the stock Jupyter Book did not build:\n{log[-4000:]}"
    result = RUN_DIR / "stock-weight.json"
    with locked(RUN_DIR / "stock-weight.lock"):
        if not result.exists():
            site = STOCK / "_build" / "html"
            with serve(site) as url:
                visit = PageVisit(browser, page_url(url, STOCK_PAGE))
                weight, sizes, external, _ = page_weight(site / f"{STOCK_PAGE}.html", site, visit.fetched(), url)
                visit.close()
            result.write_text(json.dumps({"weight": weight, "sizes": sizes, "external": external}))
            record_page_figure(PAGE_WEIGHT_REPORT, STOCK_ENTRY, weight)
    return json.loads(result.read_text())


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_cleanly_within_its_weight_budget(seen, site, server, page, stock_weight):
    assert seen.console_errors == []
    assert seen.failures == []
    weight, sizes, external, missed = page_weight(site / f"{page}.html", site, seen.fetched(), server)
    # Nothing comes from another site (the stock page's MathJax from a CDN is not counted in its
    # weight, which makes the budget stricter, not looser).
    assert external == []
    # The weight is read from the files; the browser fetched nothing that reading missed.
    assert missed == []
    record_page_figure(PAGE_WEIGHT_REPORT, page, weight)
    budget = WEIGHT_BUDGET_RATIO * stock_weight["weight"]
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert weight <= budget, f"{page}: {weight} bytes, budget {budget:.0f}; largest: {largest}"


def graph_pixels_are_readable(luminance):
    """A light background with dark strokes: most pixels light, some clearly dark."""
    luminance = sorted(luminance)
    median, darkest = luminance[len(luminance) // 2], luminance[0]
    return median > 200 and darkest < 100, f"median luminance {median}, darkest {darkest}"


# Scrolls the part of a graph that starts `offset` CSS pixels below its top to just under the
# theme's headers (the one that stays at the top of the window, and the page's own header while it
# is in view), and returns the rectangle of it that the window shows (viewport coordinates) and
# whether something else covers its top left corner.
SHOW_GRAPH_PART = """(graph, offset) => {
    const headers = [...document.querySelectorAll('#pst-header, .bd-header-article')];
    const under = () => Math.max(0, ...headers.map(header => header.getBoundingClientRect().bottom));
    // Twice: the first scroll can move the page's own header out of view, or back into it.
    window.scrollBy(0, graph.getBoundingClientRect().top + offset - under());
    window.scrollBy(0, graph.getBoundingClientRect().top + offset - under());
    const box = graph.getBoundingClientRect(), frame = graph.parentElement.getBoundingClientRect();
    const left = Math.max(box.left, frame.left, 0);
    const right = Math.min(box.right, frame.right, window.innerWidth);
    const top = Math.max(box.top + offset, under()), bottom = Math.min(box.bottom, window.innerHeight);
    const covered = !graph.contains(document.elementFromPoint(left + 1, top + 1));
    return {x: left, y: top, width: right - left, height: bottom - top, total: box.height,
            shown: top - box.top, covered};
}"""


def graph_luminance(page, graph):
    """Every pixel of `graph` as the reader sees it, one window's height at a time. (Playwright's
    element screenshot of a graph taller than the window lays the page out again at a larger
    size for the shot; with the CI machine busy, one such shot of a dark page came back dark and
    another waited past its deadline for the graph to hold still.)"""
    import io

    from PIL import Image

    luminance, offset = [], 0
    while True:
        part = graph.evaluate(SHOW_GRAPH_PART, offset)
        assert part["width"] > 0 and part["height"] > 0 and not part["covered"], f"graph not in view: {part}"
        assert part["shown"] <= offset + 1, f"part of the graph was skipped: {part}"
        clip = {key: part[key] for key in ("x", "y", "width", "height")}
        png = page.screenshot(clip=clip)
        luminance += Image.open(io.BytesIO(png)).convert("L").get_flattened_data()
        offset = part["shown"] + part["height"]
        if offset >= part["total"] - 1:
            return luminance


PAGES_WITH_GRAPHS = [page for page in NOTEBOOK_PAGES if graph_outputs(read_notebook(page))]

# Folded cells (myst-nb's hide-cell, a <details>) that hold a graph: opened for the check,
# then closed again.
OPEN_FOLDS_WITH_GRAPHS = """() => {
    const folds = [...document.querySelectorAll('details:not([open])')]
        .filter((fold) => fold.querySelector('.cell_output svg[role="img"]'));
    folds.forEach((fold) => { fold.open = true; });
    window.__foldsOpenedForGraphs = folds;
}"""
CLOSE_FOLDS_OPENED = """() => {
    (window.__foldsOpenedForGraphs || []).forEach((fold) => { fold.open = false; });
}"""


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_launch_and_download_buttons_serve_this_notebook(seen, server, page):
    hrefs = seen.page.eval_on_selector_all("a[href]", "links => links.map(link => link.href)")
    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    owner_repo = urlparse(repository).path.strip("/")
    binder = f"https://mybinder.org/v2/gh/{owner_repo}/main?urlpath=lab/tree/{page}.ipynb"
    assert binder in hrefs
    colab = f"https://colab.research.google.com/github/{owner_repo}/blob/main/{page}.ipynb"
    assert colab in hrefs, "no Open in Colab link for this notebook"
    downloads = [href for href in hrefs if href.endswith(f"{page}.ipynb") and href.startswith(server)]
    assert downloads, "no download link for the notebook"
    served = seen.page.request.get(downloads[0])
    assert served.ok
    assert json.loads(served.body()) == json.loads((ROOT / f"{page}.ipynb").read_text())
    assert seen.page.locator("button.btn-launch-thebe").count() == 1, "no Live Code (Thebe) button"


CODE_WIDTHS = """() => {
    const lines = block => block.textContent.replace(/\\n$/, '').split('\\n');
    const widest = block => lines(block).reduce((a, b) => (b.length > a.length ? b : a), '');
    const inputs = [...document.querySelectorAll('div.cell_input pre')];
    const outputs = [...document.querySelectorAll('div.cell_output pre')];
    // Does each input block have room for 79 characters in its own font? (All code is monospace.)
    const cramped = inputs.map((block, index) => {
        const probe = document.createElement('span');
        probe.textContent = 'M'.repeat(%d);
        block.appendChild(probe);
        const needed = probe.getBoundingClientRect().width;
        probe.remove();
        const style = getComputedStyle(block);
        const room = block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return {index: index, needed: needed, room: room, font: style.fontSize + ' ' + style.fontFamily};
    }).filter(block => block.needed > block.room);
    const over = blocks => blocks.map((block, index) => ({index: index, block: block}))
        .filter(item => item.block.scrollWidth > item.block.clientWidth)
        .map(item => ({index: item.index, first: lines(item.block)[0], widest: widest(item.block),
                       columns: widest(item.block).length,
                       overflow: item.block.scrollWidth - item.block.clientWidth}));
    return {inputs: inputs.length, outputs: outputs.length, cramped: cramped,
            inputsOver: over(inputs), outputsOver: over(outputs)};
}""" % CODE_COLUMNS


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_code_fits_its_column_without_a_scroll_bar(seen, page):
    """At the desktop width, the code column shows 79 characters and every code cell, its input
    and its outputs, fits it: no horizontal scroll bar (issue 15)."""
    widths = seen.page.evaluate(CODE_WIDTHS)
    record_page_figure(CODE_WIDTH_REPORT, page, {
        "inputs": widths["inputs"], "inputs_over": len(widths["inputsOver"]),
        "outputs": widths["outputs"], "outputs_over": len(widths["outputsOver"]),
    })
    assert widths["cramped"] == [], f"blocks without room for {CODE_COLUMNS} characters"
    too_wide = [
        f"{page}: {kind} block {block['index'] + 1} (starting {block['first']!r}) scrolls by "
        f"{block['overflow']} px; its widest line has {block['columns']} characters: {block['widest']!r}"
        for kind, blocks in (("input", widths["inputsOver"]), ("output", widths["outputsOver"]))
        for block in blocks
    ]
    assert too_wide == [], "\n".join(too_wide)


# The first row of every two-column markdown table whose box scrolls sideways. Such a table
# is prose (a map, a key); on a phone book/_static/narrow-tables.css stacks its rows.
TWO_COLUMN_TABLES_THAT_SCROLL = """() => [...document.querySelectorAll('.pst-scrollable-table-container')]
    .filter(box => box.querySelector(':scope > table') && !box.querySelector('tr > :nth-child(3)'))
    .filter(box => box.scrollWidth > box.clientWidth + 1)
    .map(box => box.querySelector('tr').textContent.replace(/\\s+/g, ' ').trim())"""


@pytest.mark.parametrize("width", ["phone"])
@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_two_column_tables_fit_a_phone_without_scrolling(seen, page, width):
    """On a phone a two-column table shows both columns: no sideways scroll hides the second."""
    scrolling = seen.page.evaluate(TWO_COLUMN_TABLES_THAT_SCROLL)
    assert scrolling == [], f"{page}: two-column tables that scroll at {width} width: {scrolling}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("color_mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES_WITH_GRAPHS)
def test_every_graph_is_visible_and_readable(seen, page, color_mode, width):
    seen.set_mode(color_mode)
    assert seen.page.evaluate("document.documentElement.dataset.theme") == color_mode
    graphs = seen.page.locator('.cell_output svg[role="img"]')  # the theme's icons are SVGs too
    assert graphs.count() == graph_outputs(read_notebook(page))
    # a graph in a folded cell is checked as the reader sees it once the fold is opened
    seen.page.evaluate(OPEN_FOLDS_WITH_GRAPHS)
    try:
        for index in range(graphs.count()):
            graph = graphs.nth(index)
            box = graph.bounding_box()
            assert box and box["width"] > 0 and box["height"] > 0, f"graph {index} has no size"
            assert graph.get_attribute("aria-label"), f"graph {index} has no text alternative"
            readable, figures = graph_pixels_are_readable(graph_luminance(seen.page, graph))
            assert readable, f"graph {index} unreadable in {color_mode}: {figures}"
    finally:  # the page's other checks see it as loaded
        seen.page.evaluate(CLOSE_FOLDS_OPENED)
    assert seen.console_errors == []


# The colour theme the page has when its body starts to be laid out, and the layout shifts
# of the load.
FIRST_LAYOUT = """
window.__themeAtBody = null;
window.__layoutShift = 0;
new MutationObserver((changes, observer) => {
    if (document.body) {
        window.__themeAtBody = document.documentElement.dataset.theme;
        observer.disconnect();
    }
}).observe(document, {childList: true, subtree: true});
new PerformanceObserver(list => {
    for (const entry of list.getEntries()) window.__layoutShift += entry.value;
}).observe({type: "layout-shift", buffered: true});
"""


@pytest.mark.parametrize("color_mode", ["light", "dark"])
def test_a_first_visit_lays_out_in_its_colour_theme_from_the_start(browser, server, color_mode):
    """A reader's first visit (nothing stored) in the system's colour mode: the theme is
    resolved before the body is laid out (_ext/page_fixes.py), not left at "auto" until the
    whole page is parsed, when inline code gains its border and long pages rewrap."""
    context = browser.new_context(viewport=VIEWPORT, color_scheme=color_mode)
    try:
        context.add_init_script(FIRST_LAYOUT)
        page = context.new_page()
        page.goto(page_url(server, "book/second_order_at_scale"), wait_until="networkidle")
        assert page.evaluate("window.__themeAtBody") == color_mode
        assert page.evaluate("document.documentElement.dataset.theme") == color_mode
        assert page.evaluate("window.__layoutShift") < 0.01
    finally:
        context.close()


# The theme's tab stops (_ext/first_paint.py): blocks inside closed <details>, by each one's
# tabindex attribute (null: never scanned); then, once every <details> is opened, each block's
# tab stop against whether it scrolls.
FOLDED_BLOCKS = """() => [...document.querySelectorAll('details:not([open]) pre')]"""
TAB_STOPS_WHEN_OPENED = """async () => {
    const blocks = [...document.querySelectorAll('details:not([open]) pre')];
    document.querySelectorAll('details').forEach((details) => { details.open = true; });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return blocks.map((block) => [block.tabIndex, block.scrollWidth > block.clientWidth]);
}"""


def test_folded_blocks_get_their_tab_stop_when_opened_not_before(browser, server):
    """The theme gives a block that scrolls a tab stop; reading a folded block's width made
    the browser lay it out alone, once per block (issue 27). The patched scan skips folded
    blocks, and scans again when one opens: at a phone's width some code lines scroll."""
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(page_url(server, "book/fused_conv_bn"), wait_until="networkidle")
        page.wait_for_timeout(500)  # past the theme's debounced rescan
        folded = page.evaluate(FOLDED_BLOCKS + ".map((block) => block.getAttribute('tabindex'))")
        assert folded and set(folded) == {None}, folded
        opened = page.evaluate(TAB_STOPS_WHEN_OPENED)
        assert all(tab_index == (0 if scrolls else -1) for tab_index, scrolls in opened), opened
        assert any(scrolls for _, scrolls in opened)
    finally:
        context.close()


PLOT_BOXES = "[...document.querySelectorAll('div.cell_output img')].map((plot) => {" \
    "const box = plot.getBoundingClientRect(); return [box.width, box.height, plot.naturalWidth > 0]; })"
# Asks for every image now, and settles once each has loaded.
LOAD_EVERY_IMAGE_NOW = """Promise.all([...document.querySelectorAll('img')].map((image) => {
  image.loading = 'eager';
  return image.complete ? null : new Promise((done) => { image.onload = image.onerror = done; });
}))"""


def plot_boxes(browser, server, page_name, hold_plots):
    """The plots' boxes at a phone's width once every image has loaded, or, with `hold_plots`,
    while their requests are held unanswered (as on a slow network)."""
    context = browser.new_context(viewport=PHONE)
    held = []
    try:
        page = context.new_page()
        if hold_plots:
            page.route("**/_images/*", lambda route: held.append(route))
        page.goto(page_url(server, page_name), wait_until="domcontentloaded")
        if not hold_plots:
            page.evaluate(LOAD_EVERY_IMAGE_NOW)
            return page.evaluate(PLOT_BOXES)
        plots = page.evaluate("document.querySelectorAll('div.cell_output img').length")
        page.evaluate("document.querySelectorAll('img').forEach((image) => { image.loading = 'eager'; })")
        for _ in range(100):  # at most 10 s for the requests to reach the route
            if len(held) >= plots:
                break
            page.wait_for_timeout(100)
        assert len(held) >= plots, f"only {len(held)} of {plots} plot requests were made"
        return page.evaluate(PLOT_BOXES)
    finally:
        for route in held:
            route.abort()
        context.close()


def test_images_load_lazily_and_a_plot_keeps_its_place_before_it_arrives(browser, server, site):
    """Images wait until the reader scrolls near them (_ext/first_paint.py, issue 27), so a
    plot's box must not depend on its file: while its request is unanswered, each plot takes
    the place, at a phone's width, that it takes once loaded."""
    for page_path in sorted(site.rglob("*.html")):
        if "_static" not in page_path.parts:
            eager = [tag for tag in parsed_page(page_path).find_all("img") if tag.get("loading") != "lazy"]
            assert eager == [], f"{page_path.relative_to(site)}: {eager}"
    with_plots = [
        str(path.relative_to(site).with_suffix("")) for path in sorted((site / "book").glob("*.html"))
        if parsed_page(path).select("div.cell_output img")
    ]
    assert "book/fused_conv_bn" in with_plots, with_plots  # SVG plots
    assert "book/double_backward_at_work_in_depth" in with_plots, with_plots  # a PNG among them
    sizes = lambda boxes: [size for box in boxes for size in box[:2]]  # noqa: E731
    for page_name in with_plots:
        loaded = plot_boxes(browser, server, page_name, hold_plots=False)
        waiting = plot_boxes(browser, server, page_name, hold_plots=True)
        assert loaded and all(arrived for *_, arrived in loaded), (page_name, loaded)
        assert not any(arrived for *_, arrived in waiting), (page_name, waiting)
        assert sizes(waiting) == pytest.approx(sizes(loaded), abs=1), (page_name, waiting, loaded)


SPINNING = "<style>@keyframes turn {to {transform: rotate(1turn)}} .turn {animation: turn 1s infinite}</style>"


def test_waiting_for_stillness_ignores_what_is_folded_and_is_bounded(browser):
    """The wait that hung the suite (issue 21): an animation inside a closed <details> is not
    waited for; one the reader sees and that never ends fails the wait within its deadline,
    naming the animation."""
    from playwright.sync_api import Error

    context = browser.new_context()
    try:
        page = context.new_page()
        # Shown once, so that its animation exists, then folded.
        page.set_content(SPINNING + '<details open><summary>folded</summary><p class="turn">x</p></details>')
        assert page.evaluate("document.getAnimations().length") == 1
        page.evaluate("document.querySelector('details').open = false")
        page.evaluate(WAIT_FOR_STILLNESS, 2_000)
        page.set_content(SPINNING + '<p class="turn">x</p>')
        started = time.monotonic()
        with pytest.raises(Error, match=r"not still after 500 ms.*unsettled animations: turn \(running\) on P"):
            page.evaluate(WAIT_FOR_STILLNESS, 500)
        assert time.monotonic() - started < 5
    finally:
        context.close()


def test_search_finds_gradgradcheck_in_the_double_backward_chapter(browser, server):
    visit = PageVisit(browser, server + "search.html?q=gradgradcheck")
    try:
        results = visit.page.locator("#search-results a")
        results.first.wait_for(timeout=15_000)
        hrefs = results.evaluate_all("links => links.map(link => link.href)")
        assert any("book/double_backward.html" in href for href in hrefs), hrefs
        assert visit.console_errors == []
    finally:
        visit.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("color_mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES)
def test_accessibility_audit_finds_nothing_serious(seen, page, color_mode, width):
    seen.set_mode(color_mode)
    assert seen.page.evaluate("document.documentElement.dataset.theme") == color_mode
    errors, failures = len(seen.console_errors), len(seen.failures)
    violations = accessibility_violations(seen.page)
    # axe's own stylesheet preload resolves the theme's `@import "../basic.css"` against the
    # page instead of the stylesheet and logs a 404 for /basic.css, a request no reader's
    # browser makes: what axe itself fetched is not the page's doing.
    del seen.console_errors[errors:], seen.failures[failures:]
    impacts = collections.Counter(violation["impact"] for violation in violations)
    record_page_figure(AUDIT_REPORT, f"{page} ({color_mode}, {width})", dict(impacts))
    serious = [
        f"{violation['id']} ({violation['impact']}): {violation['help']} x{len(violation['nodes'])}"
        for violation in violations
        if violation["impact"] in ("serious", "critical")
    ]
    assert serious == []


def test_stock_page_weight_is_measured(stock_weight):
    # The reference of every page's budget: the template's notebook page, with the theme's icon
    # script and CSS, its executed plot and its HTML.
    assert stock_weight["weight"] > 100_000, stock_weight
    assert any(name.endswith("fontawesome.js") for name in stock_weight["sizes"]), stock_weight["sizes"]
    record_page_figure(PAGE_WEIGHT_REPORT, STOCK_ENTRY, stock_weight["weight"])



LAYOUT = """() => {
    const right = element => Math.round(element.getBoundingClientRect().right);
    const graphs = [...document.querySelectorAll('div.cell_output svg[role="img"], div.cell_output > img')];
    const launch = document.querySelector('.article-header-buttons');
    return {
        page: document.documentElement.scrollWidth,
        wideGraphs: graphs.map((graph, index) => ({index: index, width: right(graph) - right(graph.parentElement)}))
            .filter(graph => graph.width > 1),
        buttonsRight: launch ? right(launch) : null,
    };
}"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_nothing_is_wider_than_the_screen(seen, page, width):
    """The page never scrolls sideways (code and output blocks scroll inside themselves), every
    graph fits its column, and the header's launch buttons are on screen (issue 23)."""
    layout = seen.page.evaluate(LAYOUT)
    screen = WIDTHS[width]["width"]
    assert layout["page"] <= screen, f"{page} is {layout['page']} px wide in a {screen} px window"
    assert layout["wideGraphs"] == [], "graphs wider than their column"
    assert layout["buttonsRight"] is not None and layout["buttonsRight"] <= screen


SIZE_BUTTONS = """() => [...document.querySelectorAll('div.cell_output svg[role="img"]')].map(graph => ({
    hidden: graph.parentElement.querySelector('button.graph-size-button').hidden,
    scaled: graph.width.baseVal.value > graph.getBoundingClientRect().width + 1,
}))"""


BUTTONS_OVER_GRAPHS = """() => [...document.querySelectorAll('button.graph-size-button')]
    .filter(button => !button.hidden)
    .map((button, index) => {
        const graph = button.parentElement.querySelector('svg[role="img"], img');
        return {index: index, below: button.getBoundingClientRect().bottom - graph.getBoundingClientRect().top};
    })
    .filter(button => button.below > 0.5)"""


@pytest.mark.parametrize("width", ["phone"])
@pytest.mark.parametrize("page", PAGES_WITH_GRAPHS)
def test_no_size_button_covers_its_graph(seen, page, width):
    """Every shown "Show at full size" button sits in the strip above its graph, also where a
    graph is nested in an output's own layout (two drawings side by side, with titles)."""
    assert seen.page.evaluate(BUTTONS_OVER_GRAPHS) == []


@pytest.mark.parametrize("width", ["phone"])
@pytest.mark.parametrize("color_mode", ["light", "dark"])
@pytest.mark.parametrize("page", ["book/simple_grad_1_tape"])
def test_a_scaled_down_graph_can_be_opened_at_full_size(seen, page, color_mode, width):
    """On a phone the tape after backward is wider than the column: its button shows it at its
    own size, scrolling inside its box, not the page; pressed again, it fits again. A graph
    shown at its own size already has no button, and at the desktop's width no graph has one."""
    seen.set_mode(color_mode)
    graphs = seen.page.evaluate(SIZE_BUTTONS)
    assert [graph["hidden"] for graph in graphs] == [not graph["scaled"] for graph in graphs]
    scaled = [index for index, graph in enumerate(graphs) if graph["scaled"]]
    assert scaled, "no graph of the page is scaled down on a phone"
    wide = seen.page.locator('div.cell_output svg[role="img"]').nth(scaled[0])
    fitted = wide.bounding_box()["width"]
    natural = wide.evaluate("graph => graph.width.baseVal.value")
    button = wide.locator("xpath=..").locator("button.graph-size-button")
    # The button sits in the strip above the graph, not over its labels.
    assert button.bounding_box()["y"] + button.bounding_box()["height"] <= wide.bounding_box()["y"] + 0.5
    button.click()
    assert button.text_content() == "Fit to the column"
    assert wide.bounding_box()["width"] == pytest.approx(natural, abs=1)
    assert seen.page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]["width"]
    button.click()
    assert button.text_content() == "Show at full size"
    assert wide.bounding_box()["width"] == pytest.approx(fitted, abs=1)
    seen.set_width("desktop")
    assert all(graph["hidden"] for graph in seen.page.evaluate(SIZE_BUTTONS))
