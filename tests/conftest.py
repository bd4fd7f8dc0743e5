"""Shared paths for the tests; the helper module is imported from book/, as the chapters do.

Also how the suite spreads over pytest-xdist's workers (see `work_unit`), when the site builds
start, and the figures the site tests print at the end of a run."""
import fcntl
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))
# The site's small Sphinx extensions, whose functions the tests call (reading time, routes).
sys.path.insert(0, str(ROOT / "_ext"))

# tests/test_site.py records per-page figures in these files; the summary below prints them.
PAGE_WEIGHT_REPORT = ROOT / "_build" / "page-weight.json"
AUDIT_REPORT = ROOT / "_build" / "accessibility-audit.json"
CODE_WIDTH_REPORT = ROOT / "_build" / "code-width.json"
REPORTS = (PAGE_WEIGHT_REPORT, AUDIT_REPORT, CODE_WIDTH_REPORT)
# The stock Jupyter Book page's entry in PAGE_WEIGHT_REPORT.
STOCK_ENTRY = "stock Jupyter Book template: notebooks"


def record_page_figure(report, page, value):
    """Keep `value` for `page` in the JSON file `report`; workers write in turn, under a lock."""
    report.parent.mkdir(parents=True, exist_ok=True)
    with open(report.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        figures = json.loads(report.read_text()) if report.exists() else {}
        figures[page] = value
        report.write_text(json.dumps(figures, indent=1, sort_keys=True))
        fcntl.flock(lock, fcntl.LOCK_UN)


def work_unit(nodeid):
    """What one xdist worker runs in one go. A notebook's cells share a kernel and a test file
    its module fixtures, so each is one unit (as --dist loadfile); but each page of the site is
    its own unit, so the pages spread over the workers while a page's checks share one load."""
    path, _, name = nodeid.partition("::")
    if path.endswith("tests/test_site.py") and "[" in name:
        from book_files import toc_pages

        params = name.split("[", 1)[1]
        pages = [page for page in toc_pages() if params.startswith((f"{page}-", f"{page}]"))]
        if pages:
            return f"site page {max(pages, key=len)}"
    return path


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class BookScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return BookScheduling(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    # Lets a fixture's teardown know that its test failed (tests/test_site.py's `seen`).
    report = yield
    if report.when == "call" and report.failed:
        item.failed_call = True
    return report


def pytest_collection_finish(session):
    # The site builds start as soon as the tests are known, so they overlap with the notebooks.
    # Only one process per run starts them (xdist's workers all collect every test).
    if session.config.option.collectonly:
        return
    if any(item.path.name == "test_site.py" for item in session.items):
        import site_support

        if site_support.starts_the_builds():
            site_support.start_builds()


def pytest_sessionstart(session):
    # The figures belong to one run: drop the last run's so that a run without the site tests
    # prints none. Only the controller does it (xdist workers start after this hook).
    if not hasattr(session.config, "workerinput"):
        for report in REPORTS:
            report.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    if PAGE_WEIGHT_REPORT.exists():
        weights = json.loads(PAGE_WEIGHT_REPORT.read_text())
        stock = weights.pop(STOCK_ENTRY, None)
        terminalreporter.section("page weight: what a reader downloads, gzip as GitHub Pages serves it")
        if stock:
            terminalreporter.line(f"{stock / 1e3:8.1f} kB  {STOCK_ENTRY} (budget: 0.6 times this)")
        for page, size in sorted(weights.items()):
            ratio = f"  {size / stock:.2f}x stock" if stock else ""
            terminalreporter.line(f"{size / 1e3:8.1f} kB  {page}{ratio}")
    if AUDIT_REPORT.exists():
        terminalreporter.section("accessibility audit (axe): violations by impact")
        for page, counts in sorted(json.loads(AUDIT_REPORT.read_text()).items()):
            found = ", ".join(f"{impact} {count}" for impact, count in sorted(counts.items()))
            terminalreporter.line(f"{page}: {found or 'none'}")
    if CODE_WIDTH_REPORT.exists():
        terminalreporter.section("code blocks wider than the column at 1280 px")
        for page, counts in sorted(json.loads(CODE_WIDTH_REPORT.read_text()).items()):
            terminalreporter.line(
                f"{page}: inputs {counts['inputs_over']} of {counts['inputs']}, "
                f"outputs {counts['outputs_over']} of {counts['outputs']}"
            )
