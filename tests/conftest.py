"""Shared paths for the tests; the helper module is imported from book/, as the chapters do."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))

# tests/test_site.py records per-page figures in these files; the summary below prints them.
PAGE_WEIGHT_REPORT = ROOT / "_build" / "page-weight.json"
AUDIT_REPORT = ROOT / "_build" / "accessibility-audit.json"


def record_page_figure(report, page, value):
    """Keep `value` for `page` in the JSON file `report` (all site tests run in one worker)."""
    figures = json.loads(report.read_text()) if report.exists() else {}
    figures[page] = value
    report.write_text(json.dumps(figures, indent=1, sort_keys=True))


def pytest_sessionstart(session):
    # The figures belong to one run: drop the last run's so that a run without the site tests
    # prints none. Only the controller does it (xdist workers start after this hook).
    if not hasattr(session.config, "workerinput"):
        for report in (PAGE_WEIGHT_REPORT, AUDIT_REPORT):
            report.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    if PAGE_WEIGHT_REPORT.exists():
        terminalreporter.section("page weight: HTML plus what it loads from the site")
        for page, size in sorted(json.loads(PAGE_WEIGHT_REPORT.read_text()).items()):
            terminalreporter.line(f"{size / 1e6:8.2f} MB  {page}")
    if AUDIT_REPORT.exists():
        terminalreporter.section("accessibility audit (axe): violations by impact")
        for page, counts in sorted(json.loads(AUDIT_REPORT.read_text()).items()):
            found = ", ".join(f"{impact} {count}" for impact, count in sorted(counts.items()))
            terminalreporter.line(f"{page}: {found or 'none'}")
