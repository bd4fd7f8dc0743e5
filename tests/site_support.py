"""What the site tests share: the builds (the book's and a stock Jupyter Book's, each made once
per run and shared by every pytest-xdist worker), a local web server, one page load per page
that serves every browser check of that page, and the page-weight arithmetic.

The builds start in the background as soon as the first worker has collected the tests
(conftest.pytest_collection_finish), so they overlap with the notebooks; a test that needs a
build waits for it. Everything about one run lives in _build/test-run/, stamped with xdist's
run id, so no worker can read the last run's results.
"""
import fcntl
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

from bs4 import BeautifulSoup

from conftest import ROOT

HTML = ROOT / "_build" / "html"
RUN_DIR = ROOT / "_build" / "test-run"
STOCK = RUN_DIR / "stock"   # `jupyter-book create`'s template, built by the pinned jupyter-book
STOCK_PAGE = "notebooks"    # the template's notebook page
# Debian's Chromium here and in .ci/run; GitHub's Ubuntu runners ship Google Chrome instead.
CHROMIUM = next(filter(None, map(shutil.which, ["chromium", "chromium-browser", "google-chrome"])), None)
# No sandbox as root, and no background connections, which a closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
# The book's desktop width: a 1280 px wide window.
VIEWPORT = {"width": 1280, "height": 720}
# A phone's screen (issue 23): 390 px wide, as an iPhone 12 to 15 in portrait.
PHONE = {"width": 390, "height": 844}
# The widths every page is checked at, by name.
WIDTHS = {"desktop": VIEWPORT, "phone": PHONE}
# A page may weigh at most this fraction of the stock template's notebook page (issue 16).
WEIGHT_BUDGET_RATIO = 0.6
# GitHub Pages compresses text with gzip; binary formats (PNG, WOFF2) are sent as they are.
COMPRESSED_TYPES = {".html", ".css", ".js", ".svg", ".json", ".txt", ".xml", ".ico", ".map"}
_LOCAL_RUN = uuid.uuid4().hex  # without xdist, this process is the whole run


def run_id():
    return os.environ.get("PYTEST_XDIST_TESTRUNUID", _LOCAL_RUN)


def starts_the_builds():
    """One process per run builds: xdist's first worker, or pytest itself without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"


def jupyter_book():
    return str(Path(sys.executable).with_name("jupyter-book"))


def start_builds():
    """Start both builds in the background; each writes its log and, when done, its exit code."""
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    RUN_DIR.mkdir(parents=True)
    (RUN_DIR / "run-id").write_text(run_id())
    # A clean build of the book: no page or doctree of an earlier build survives.
    for stale in ("html", ".doctrees", "jupyter_execute"):
        shutil.rmtree(ROOT / "_build" / stale, ignore_errors=True)
    book = [jupyter_book(), "build", str(ROOT), "-W", "-n", "--keep-going"]
    # The stock book as `jupyter-book create` makes it, built as its own config says (it runs
    # its notebook, which draws the plot the page shows).
    stock = f"{jupyter_book()} create {STOCK} >/dev/null && {jupyter_book()} build {STOCK}"
    _background("site", subprocess.list2cmdline(book))
    _background("stock", stock)


def _background(name, command):
    log, code = RUN_DIR / f"{name}.log", RUN_DIR / f"{name}.rc"
    script = f"({command}) >{log} 2>&1; echo $? >{code}.tmp && mv {code}.tmp {code}"
    subprocess.Popen(["sh", "-c", script], cwd=ROOT, start_new_session=True)


def wait_for_build(name, timeout=90):
    """(exit code, log) of this run's build `name`, waiting for it to finish. The builds take
    15-50 s here; the bound stays below the suite's per-test limit (pytest.ini), so a stuck
    build fails the first test that waits for it with this message, not a bare time-out."""
    deadline = time.monotonic() + timeout
    code = RUN_DIR / f"{name}.rc"
    while time.monotonic() < deadline:
        stamp = RUN_DIR / "run-id"
        if stamp.exists() and stamp.read_text() == run_id() and code.exists():
            return int(code.read_text()), (RUN_DIR / f"{name}.log").read_text()
        time.sleep(0.2)
    raise TimeoutError(f"the {name} build of this run did not finish in {timeout} s")


@contextmanager
def locked(path):
    """An exclusive lock between the workers of a run (and between runs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---- A local web server ------------------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(directory):
    handler = functools.partial(QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


# ---- One page load -----------------------------------------------------------------------------

# Playwright bounds its own actions (clicks, waits, screenshots, navigation); a script run with
# `page.evaluate` has no bound, so every script that awaits something races a deadline.
ACTION_TIMEOUT_MS = 20_000
SCRIPT_TIMEOUT_MS = 10_000
# axe-core takes 3-5 s on the longest page on a quiet machine, and passed 10 s there while the
# machine's two cores were busy with other work: its bound is a limit against hanging, not a
# measure of speed, so it leaves room (the test's own limit is 120 s, pytest.ini).
AXE_TIMEOUT_MS = 60_000
# pydata-sphinx-theme's resize handler runs 300 ms after the last resize.
THEME_RESIZE_DEBOUNCE_MS = 300

# Wait until fonts are loaded and every animation that the reader can see has finished.
# Animations of elements that are not rendered (inside a closed <details>, such as a folded
# `hide-input` cell) are left out: Chromium 156 stops advancing them, and a colour transition
# there reaches playState "finished" without ever settling its `finished` promise (issue 21:
# the copy button of the folded cell on Second order at network scale, after a switch of
# colour mode, held the suite forever).
WAIT_FOR_STILLNESS = """async (timeoutMs) => {
    const rendered = animation => {
        const target = animation.effect && animation.effect.target;
        return !target || target.checkVisibility();
    };
    const pending = new Set(document.getAnimations().filter(rendered));
    const settled = [...pending].map(animation => animation.finished
        .catch(() => null).then(() => pending.delete(animation)));
    const name = animation => `${animation.transitionProperty || animation.animationName} (`
        + `${animation.playState}) on ${animation.effect.target.tagName}.`
        + animation.effect.target.className;
    let timer;
    const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(
        `the page was not still after ${timeoutMs} ms: fonts ${document.fonts.status}; `
        + `unsettled animations: ${[...pending].map(name).join("; ") || "none"}`)), timeoutMs); });
    try { await Promise.race([Promise.all([document.fonts.ready, ...settled]), late]); }
    finally { clearTimeout(timer); }
}"""

# axe-core's audit, raced against a deadline like every other script that awaits.
AXE_RUN = """async ([options, timeoutMs]) => {
    let timer;
    const late = new Promise((_, reject) => { timer = setTimeout(
        () => reject(new Error(`axe.run did not finish in ${timeoutMs} ms`)), timeoutMs); });
    try { return await Promise.race([axe.run(document, options), late]); }
    finally { clearTimeout(timer); }
}"""


def wait_for_stillness(page):
    page.evaluate(WAIT_FOR_STILLNESS, SCRIPT_TIMEOUT_MS)


def accessibility_violations(page):
    """axe-core's violations on the page as it is now (the audit script ships with
    axe-playwright-python; its own `Axe.run` awaits axe without a bound)."""
    from axe_playwright_python.sync_playwright import Axe

    page.evaluate(Axe().axe_script)
    return page.evaluate(AXE_RUN, [{"resultTypes": ["violations"]}, AXE_TIMEOUT_MS])["violations"]


class PageVisit:
    """One load of a page in a 1280 px wide window, as a reader's browser sees it: console
    errors, failed requests, what it fetched. Every check of the page runs on this one load;
    `set_mode` switches light/dark mode with the theme's own button, as a reader would, and
    `set_width` turns the window into a phone's screen and back."""

    def __init__(self, browser, url):
        self.url = url
        self.context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
        # The theme keeps the reader's choice in localStorage; start every visit in light mode.
        self.context.add_init_script("localStorage.setItem('mode', 'light'); localStorage.setItem('theme', 'light');")
        self.context.set_default_timeout(ACTION_TIMEOUT_MS)
        self.page = self.context.new_page()
        self.console_errors, self.failures = [], []
        self.page.on("console", lambda message: message.type == "error" and self.console_errors.append(message.text))
        self.page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        self.page.on("requestfailed", lambda request: self.failures.append(f"{request.url}: {request.failure}"))
        self.page.on("response", lambda response: response.status >= 400 and self.failures.append(f"{response.url}: HTTP {response.status}"))
        self.page.goto(url, wait_until="networkidle")
        wait_for_stillness(self.page)
        self.mode, self.width = "light", "desktop"

    def fetched(self):
        """Every URL the page has fetched so far (Resource Timing), the page itself first."""
        return [self.url] + self.page.evaluate("performance.getEntriesByType('resource').map(entry => entry.name)")

    def set_mode(self, mode):
        if mode == self.mode:
            return
        self.page.emulate_media(color_scheme=mode)
        button = self.page.locator(".theme-switch-button").first
        for _ in range(3):  # the button cycles through light, dark and the system's mode
            if self.page.evaluate("document.documentElement.dataset.mode") == mode:
                break
            button.click()
        # Leave the page as a fresh load in that mode would be: no pointer over the button (its
        # hover style), no focus on it, every colour transition finished.
        self.page.mouse.move(0, 0)
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        wait_for_stillness(self.page)
        self.mode = mode

    def set_width(self, width):
        """`width` is a name in WIDTHS."""
        if width == self.width:
            return
        self.page.set_viewport_size(WIDTHS[width])
        # The theme re-marks which code and output blocks scroll (tabindex 0, so a keyboard can
        # reach them) in a resize handler debounced by 300 ms; a page loaded at this width has
        # them marked from the start.
        self.page.wait_for_timeout(THEME_RESIZE_DEBOUNCE_MS + 200)
        wait_for_stillness(self.page)
        self.width = width

    def close(self):
        self.context.close()


# ---- Page weight -------------------------------------------------------------------------------

def served_size(path):
    """Bytes GitHub Pages sends for `path`: gzip (level 6) for text, binary files as they are."""
    data = path.read_bytes()
    if path.suffix.lower() in COMPRESSED_TYPES:
        return len(gzip.compress(data, compresslevel=6, mtime=0))
    return len(data)


def _local(reference, base_file, site_root):
    """The file of the site that `reference` (relative to `base_file`) names, or None."""
    if not reference or reference.startswith(("data:", "#", "mailto:", "javascript:")):
        return None
    parts = urlparse(reference)
    if parts.scheme or reference.startswith("//"):
        return "external"
    path = unquote(parts.path)
    if not path:
        return None
    target = (site_root / path.lstrip("/")) if path.startswith("/") else (base_file.parent / path)
    return target.resolve()


CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""")
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)""")
FONT_FACE = re.compile(r"@font-face\s*{[^}]*}")


def _stylesheet_files(css_file, site_root, seen):
    """The stylesheet and what it loads: @imports (recursively) and url() images. Font files are
    left to the browser's word (see page_weight): a face is fetched only where text uses it."""
    if css_file in seen or not css_file.exists():
        return
    seen.add(css_file)
    yield css_file
    css = FONT_FACE.sub("", css_file.read_text(encoding="utf-8", errors="replace"))
    for reference in CSS_IMPORT.findall(css):
        target = _local(reference, css_file, site_root)
        if isinstance(target, Path):
            yield from _stylesheet_files(target, site_root, seen)
    for reference in CSS_URL.findall(css):
        target = _local(reference, css_file, site_root)
        if isinstance(target, Path) and target.suffix != ".css" and target.exists():
            yield target


@functools.cache
def parsed_page(html_file):
    """The page's HTML, parsed once per process: the link check, the anchors and the weight all
    read it (parsing the site's pages is most of the link check's time)."""
    return BeautifulSoup(Path(html_file).read_text(encoding="utf-8"), "html.parser")


def page_references(html_file, site_root):
    """(files of the site the page's HTML loads, references to other sites), read from the HTML:
    stylesheets and what they load, scripts, preloads, icons, images, embedded media."""
    soup = parsed_page(html_file)
    references = []
    for link in soup.find_all("link", href=True):
        if {"stylesheet", "preload", "modulepreload", "icon"} & set(link.get("rel") or []):
            references.append(link["href"])
    for tag in soup.find_all(["script", "img", "source", "video", "audio", "iframe", "embed", "input"], src=True):
        references.append(tag["src"])
    for tag in soup.find_all(["img", "source"], srcset=True):
        references += [candidate.split()[0] for candidate in tag["srcset"].split(",") if candidate.strip()]
    for style in soup.find_all("style"):
        references += CSS_URL.findall(style.get_text())
    for tag in soup.find_all(style=True):
        references += CSS_URL.findall(tag["style"])
    files, external, seen = {html_file.resolve()}, set(), set()
    for reference in references:
        target = _local(reference, html_file, site_root)
        if target == "external":
            external.add(reference)
        elif target is not None:
            if target.suffix == ".css":
                files.update(_stylesheet_files(target, site_root, seen))
            else:
                files.add(target)
    return files, external


def page_weight(html_file, site_root, fetched_urls, base_url):
    """A page's weight as a reader downloads it, compressed as GitHub Pages serves it.

    It counts what the page needs, read from the files, never what arrived before a timer fired:
    the HTML, every stylesheet (with what it imports and its url() images), script, preload,
    icon and image it references. Fonts are the one thing the files cannot tell (a face is
    fetched only where text uses it), so the fonts counted are those the browser fetched once
    `document.fonts.ready` resolved, a fixed set for a given page. References to other sites are
    returned apart, uncounted. Returns (bytes, {file: bytes}, external references, fetched files
    of the site the static reading missed).
    """
    files, external = page_references(html_file, site_root)
    fetched = set()
    for url in fetched_urls:
        if url.startswith(base_url):
            path = unquote(urlparse(url).path)
            target = (site_root / path.lstrip("/")).resolve()
            fetched.add(target / "index.html" if target.is_dir() else target)
    fonts = {path for path in fetched if path.suffix.lower() in (".woff2", ".woff", ".ttf", ".otf")}
    missing = sorted(str(path.relative_to(site_root.resolve())) for path in fetched - files - fonts)
    sizes = {str(path.relative_to(site_root.resolve())): served_size(path) for path in files | fonts if path.exists()}
    return sum(sizes.values()), sizes, sorted(external), missing


def page_url(base_url, page):
    return urljoin(base_url, f"{page}.html")


def write_json(path, value):
    path.write_text(json.dumps(value, indent=1, sort_keys=True))
