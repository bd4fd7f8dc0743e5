"""Shared paths for the tests; the helper module is imported from book/, as the chapters do."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))
