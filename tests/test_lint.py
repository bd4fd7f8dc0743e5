"""The repository keeps itself clean: ruff over the Python files and the notebooks' code cells,
codespell over prose and code (settings in pyproject.toml)."""
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

TOOLS = Path(sys.executable).parent
CHECKED = ["book", "tests", "tools", "_ext", "README.md", "Makefile", "_config.yml", "_toc.yml"]


def run(tool, *arguments):
    return subprocess.run(
        [str(TOOLS / tool), *arguments], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_finds_nothing():
    result = run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_codespell_finds_nothing():
    result = run("codespell", "--toml", "pyproject.toml", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr
