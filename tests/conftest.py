"""Shared paths for the tests; the helper module is imported from book/, as the chapters do."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))

# tests/test_site.py records each page's weight here; the summary below prints it.
PAGE_WEIGHT_REPORT = ROOT / "_build" / "page-weight.json"


def pytest_terminal_summary(terminalreporter):
    if not PAGE_WEIGHT_REPORT.exists():
        return
    weights = json.loads(PAGE_WEIGHT_REPORT.read_text())
    terminalreporter.section("page weight: HTML plus what it loads from the site")
    for page, size in sorted(weights.items()):
        terminalreporter.line(f"{size / 1e6:8.2f} MB  {page}")
