"""The site as a reader meets it: built once from a clean _build with warnings as errors, then
checked as files (links, anchors) and in headless Chromium (console, requests, graphs in light
and dark mode, launch and download links, search, accessibility, page weight).

Everything here shares one build, so it lives in one file: pytest-xdist's --dist loadfile keeps
it on one worker, while the notebooks run on the others.
"""
import collections
import functools
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from conftest import AUDIT_REPORT, PAGE_WEIGHT_REPORT, ROOT, record_page_figure
from book_files import toc_pages

HTML = ROOT / "_build" / "html"
# Debian's Chromium here and in .ci/run; GitHub's Ubuntu runners ship Google Chrome instead.
CHROMIUM = next(filter(None, map(shutil.which, ["chromium", "chromium-browser", "google-chrome"])), None)
# The probe's flags for this machine: no sandbox as root, and no background connections,
# which a closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
# HTML plus everything the page loads from the site, uncompressed. About 2.7 MB of it is
# shared by every page and cached after the first: the theme's icon script (1.5 MB), MathJax
# (1.2 MB, served by the site itself) and the theme's CSS. The rest is the chapter.
PAGE_WEIGHT_BUDGET = 5_000_000
PAGES = toc_pages()
NOTEBOOK_PAGES = [page for page in PAGES if (ROOT / f"{page}.ipynb").exists()]


@pytest.fixture(scope="module")
def build():
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    return subprocess.run(
        [str(jupyter_book), "build", str(ROOT), "-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def site(build):
    if build.returncode != 0:
        pytest.fail("the site did not build; see test_site_builds_with_warnings_as_errors")
    return HTML


def test_site_builds_with_warnings_as_errors(build):
    # -W turns every warning into a non-zero exit, so the exit code is the whole verdict.
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]


def graph_outputs(notebook):
    """How many graphs (inline SVGs with a text alternative) the notebook's stored outputs hold."""
    return sum(
        '<svg role="img"' in output.get("data", {}).get("text/html", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_chapter_page_shows_its_stored_outputs(site, page):
    notebook = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    html = (site / f"{page}.html").read_text()
    # Every graph stored in the notebook is on its page, inline, as stored (not re-executed).
    assert html.count('<svg role="img" aria-label=') == graph_outputs(notebook)
    provenance = notebook.metadata["provenance"]
    assert f"produced with torch {provenance['torch']} on {provenance['date']}" in html


def internal_links(page_path):
    soup = BeautifulSoup(page_path.read_text(), "html.parser")
    for tag in soup.find_all(["a", "link", "img", "script"]):
        target = tag.get("href") or tag.get("src")
        if target and not urlparse(target).scheme and not target.startswith(("//", "mailto:")):
            yield target


@functools.cache
def anchors_of(page_path):
    soup = BeautifulSoup(page_path.read_text(), "html.parser")
    return {tag["id"] for tag in soup.find_all(id=True)} | {tag["name"] for tag in soup.find_all("a", attrs={"name": True})}


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


# ---- In the browser ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
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


class PageVisit:
    """One page load with what a reader's browser saw: console errors, failures, bytes."""

    def __init__(self, browser, url, color_mode="light"):
        self.context = browser.new_context(color_scheme=color_mode)
        # The theme keeps the reader's choice in localStorage; set it before any script runs.
        self.context.add_init_script(
            f"localStorage.setItem('mode', '{color_mode}'); localStorage.setItem('theme', '{color_mode}');"
        )
        self.page = self.context.new_page()
        self.console_errors, self.failures, self.bytes_from_site = [], [], 0
        self.page.on("console", lambda message: message.type == "error" and self.console_errors.append(message.text))
        self.page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        self.page.on("requestfailed", lambda request: self.failures.append(f"{request.url}: {request.failure}"))
        self.page.on("response", lambda response: self._count(url, response))
        self.page.goto(url, wait_until="networkidle")

    def _count(self, url, response):
        if response.status >= 400:
            self.failures.append(f"{response.url}: HTTP {response.status}")
        elif response.url.startswith(url.split("book/")[0]):
            # body() lets other handlers run while it waits: read it before touching the total.
            size = len(response.body())
            self.bytes_from_site += size

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser, server):
    visits = []

    def open_page(path, color_mode="light"):
        visits.append(PageVisit(browser, urljoin(server, path), color_mode))
        return visits[-1]

    yield open_page
    for page_visit in visits:
        page_visit.close()


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_cleanly_within_its_weight_budget(visit, page):
    seen = visit(f"{page}.html")
    assert seen.console_errors == []
    assert seen.failures == []
    record_page_figure(PAGE_WEIGHT_REPORT, page, seen.bytes_from_site)
    assert seen.bytes_from_site <= PAGE_WEIGHT_BUDGET, f"{page}: {seen.bytes_from_site} bytes"


def graph_pixels_are_readable(png):
    """A light background with dark strokes: most pixels light, some clearly dark."""
    from PIL import Image

    luminance = sorted(Image.open(io.BytesIO(png)).convert("L").get_flattened_data())
    median, darkest = luminance[len(luminance) // 2], luminance[0]
    return median > 200 and darkest < 100


PAGES_WITH_GRAPHS = [
    page for page in NOTEBOOK_PAGES if graph_outputs(nbformat.read(ROOT / f"{page}.ipynb", as_version=4))
]


@pytest.mark.parametrize("color_mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES_WITH_GRAPHS)
def test_every_graph_is_visible_and_readable(visit, page, color_mode):
    seen = visit(f"{page}.html", color_mode)
    assert seen.page.evaluate("document.documentElement.dataset.theme") == color_mode
    graphs = seen.page.locator('.cell_output svg[role="img"]')  # the theme's icons are SVGs too
    assert graphs.count() == graph_outputs(nbformat.read(ROOT / f"{page}.ipynb", as_version=4))
    for index in range(graphs.count()):
        graph = graphs.nth(index)
        graph.scroll_into_view_if_needed()
        box = graph.bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0, f"graph {index} has no size"
        assert graph.get_attribute("aria-label"), f"graph {index} has no text alternative"
        assert graph_pixels_are_readable(graph.screenshot()), f"graph {index} unreadable in {color_mode}"


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_launch_and_download_buttons_serve_this_notebook(visit, server, page):
    seen = visit(f"{page}.html")
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


def test_search_finds_gradgradcheck_in_the_double_backward_chapter(visit):
    seen = visit("search.html?q=gradgradcheck")
    results = seen.page.locator("#search-results a")
    results.first.wait_for(timeout=15_000)
    hrefs = results.evaluate_all("links => links.map(link => link.href)")
    assert any("book/double_backward.html" in href for href in hrefs), hrefs


@pytest.mark.parametrize("color_mode", ["light", "dark"])
@pytest.mark.parametrize("page", PAGES)
def test_accessibility_audit_finds_nothing_serious(visit, page, color_mode):
    from axe_playwright_python.sync_playwright import Axe

    seen = visit(f"{page}.html", color_mode)
    violations = Axe().run(seen.page).response["violations"]
    impacts = collections.Counter(violation["impact"] for violation in violations)
    record_page_figure(AUDIT_REPORT, f"{page} ({color_mode})", dict(impacts))
    serious = [
        f"{violation['id']} ({violation['impact']}): {violation['help']} x{len(violation['nodes'])}"
        for violation in violations
        if violation["impact"] in ("serious", "critical")
    ]
    assert serious == []
