"""tools/run_elsewhere.py: how it compares a fresh run with the stored chapter, and one chapter
run end to end in a throwaway environment, as on Colab."""
import importlib.metadata
import re
import shutil
import subprocess
import sys
import sysconfig
import venv

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from book_files import toc_pages
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import run_elsewhere  # noqa: E402  (tools/ is not a package)

CHAPTER = ROOT / "book" / "simple_grad_2_known_zeros.ipynb"  # one of the quickest (~6 s)


def stdout(text):
    return new_output("stream", name="stdout", text=text)


def stderr(text):
    return new_output("stream", name="stderr", text=text)


def error(name, value):
    return new_output("error", ename=name, evalue=value, traceback=[])


def cell(outputs=(), tags=(), run=True):
    code = new_code_cell("...", execution_count=1 if run else None, outputs=list(outputs))
    if tags:
        code.metadata["tags"] = list(tags)
    return code


def test_compare_counts_failures_differences_and_new_stderr():
    raises = ["raises-exception"]
    warning = "/site-packages/torch/x.py:3: UserWarning: something new\n  warnings.warn(...)\n"
    stored = new_notebook(cells=[
        cell(),                                                 # 0 the install cell
        new_markdown_cell("text"),                              # 1
        cell([stdout("fine\n")]),                               # 2
        cell([error("RuntimeError", "expected")], raises),      # 3
        cell([error("RuntimeError", "expected")], raises),      # 4
        cell([stdout("backward: ~12 ms\n")]),                   # 5
        cell([stdout("grad 1.0\n")]),                           # 6
        cell([stdout("x\n")]),                                  # 7
        cell([stdout("y\n"), stderr("an old warning\n")]),      # 8
        cell([error("RuntimeError", "expected")], raises),      # 9
    ])
    fresh = new_notebook(cells=[
        cell([stdout("Installing gradbook\n")]),                # install output: not compared
        new_markdown_cell("text"),
        cell([error("RuntimeError", "boom\nsecond line")]),     # untagged error: unexpected
        cell([error("RuntimeError", "expected")], raises),      # tagged error: as stored
        cell([stdout("no error\n")], raises),                   # tagged, raised nothing: missed
        cell([stdout("backward: ~15 ms\n")]),                   # a time: sanitized away
        cell([stdout("grad 2.0\n")]),                           # a real difference
        cell([stdout("x\n"), stderr(warning)]),                 # a new warning
        cell([stdout("y\n"), stderr("an old warning\n")]),      # a known warning
        cell(tags=raises, run=False),                           # never reached: left out
    ])
    found = run_elsewhere.compare(stored, fresh, run_elsewhere.load_sanitizers())
    assert found.unexpected_failures == [(2, "RuntimeError: boom")]
    assert found.missed_failures == [4]
    assert found.differing_outputs == [2, 4, 6, 7]
    assert found.new_stderr == [(7, "UserWarning: something new", 2)]


def test_sanitizers_are_the_suites_rewrites():
    sanitizers = run_elsewhere.load_sanitizers(ROOT / "tests" / "sanitize.cfg")
    assert len(sanitizers) == 7
    assert run_elsewhere.sanitize("~1.84x and ~20.20 MiB", sanitizers) == "~(measured)x and ~(measured) MiB"


def test_the_cache_line_reads_the_same_on_machines_with_different_caches():
    sanitizers = run_elsewhere.load_sanitizers(ROOT / "tests" / "sanitize.cfg")
    small = "this machine's last-level cache: 32 MiB; the 3 vectors fit at 1 million only\nnext\n"
    large = "this machine's last-level cache: 260 MiB; the 3 vectors fit at both sizes\nnext\n"
    assert run_elsewhere.sanitize(small, sanitizers) == run_elsewhere.sanitize(large, sanitizers)
    # only that line's tail: the line after it is still compared
    assert run_elsewhere.sanitize(small, sanitizers).endswith("(this machine's)\nnext\n")


def test_the_cpu_lines_read_the_same_on_machines_with_different_cpus():
    sanitizers = run_elsewhere.load_sanitizers(ROOT / "tests" / "sanitize.cfg")
    xeon = "  this machine's CPU: Intel(R) Xeon(R) Processor\n  this machine's kernels: AVX512; its BLAS: mkl\n"
    epyc = "  this machine's CPU: AMD EPYC 7763\n  this machine's kernels: AVX2; its BLAS: openblas\n"
    assert run_elsewhere.sanitize(xeon, sanitizers) == run_elsewhere.sanitize(epyc, sanitizers)
    assert run_elsewhere.sanitize(xeon, sanitizers).startswith("  this machine's CPU: (this machine's)\n")


def test_a_measured_figure_s_width_does_not_change_a_padded_table():
    sanitizers = run_elsewhere.load_sanitizers(ROOT / "tests" / "sanitize.cfg")
    stored = "  jvp of grad    174   ~10.2x           12.0\n    modules  16.22  ~20.20 MiB  ~9.87 MiB\n"
    fresh = "  jvp of grad    174    ~9.9x           12.0\n    modules  16.22   ~9.87 MiB ~20.20 MiB\n"
    assert run_elsewhere.sanitize(stored, sanitizers) == run_elsewhere.sanitize(fresh, sanitizers)
    # only the spaces beside a measurement: an unmeasured column still counts
    moved = "  jvp of grad     174  ~10.2x           12.0\n    modules  16.22  ~20.20 MiB  ~9.87 MiB\n"
    assert run_elsewhere.sanitize(stored, sanitizers) != run_elsewhere.sanitize(moved, sanitizers)


def test_the_default_chapters_are_the_notebooks_of_the_toc_in_reading_order():
    expected = [ROOT / f"{page}.ipynb" for page in toc_pages() if (ROOT / f"{page}.ipynb").exists()]
    assert run_elsewhere.toc_chapters() == expected


@pytest.mark.parametrize("arguments", [
    ["--python", "/no/such/python"],
    ["--python", sys.executable, "README.md"],
    ["--python", sys.executable, "book/no_such_chapter.ipynb"],
])
def test_bad_arguments_exit_with_2(arguments, capsys):
    with pytest.raises(SystemExit) as raised:
        run_elsewhere.main(arguments)
    assert raised.value.code == 2
    assert capsys.readouterr().err


def test_a_python_without_ipykernel_is_refused_with_the_fix(tmp_path, capsys):
    venv.create(tmp_path / "bare", with_pip=False)
    assert run_elsewhere.main(["--python", str(tmp_path / "bare" / "bin" / "python"), str(CHAPTER)]) == 2
    assert "-m pip install ipykernel" in capsys.readouterr().err


def gradbook_wheel(tmp_path):
    """A wheel of the local checkout, built from a copy (setuptools writes build files next to
    the sources), as in tests/test_first_cell.py."""
    source = tmp_path / "source"
    shutil.copytree(ROOT / "book" / "gradbook", source / "book" / "gradbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "LICENSE"):
        shutil.copy(ROOT / name, source)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path / "wheels"), str(source)],
        check=True, cwd=tmp_path, timeout=60,
    )
    (wheel,) = (tmp_path / "wheels").glob("gradbook-*.whl")
    return wheel


def throwaway_environment(tmp_path):
    """A fresh venv that sees this environment's packages (torch, ipykernel) through a .pth
    file but not gradbook, and keeps whatever pip installs into it: never into .venv."""
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)  # the pip it borrows installs into the fresh venv
    python = fresh / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=30,
    ).stdout.strip()
    (tmp_path / site / "book-environment.pth").write_text(sysconfig.get_paths()["purelib"])
    return python, tmp_path / site


def test_one_chapter_runs_without_unexpected_failures_in_a_fresh_environment(tmp_path):
    python, site = throwaway_environment(tmp_path)
    summary = tmp_path / "summary.md"
    stored = CHAPTER.read_bytes()
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "run_elsewhere.py"), "--python", str(python),
         "--gradbook-source", str(gradbook_wheel(tmp_path)), "--markdown", str(summary),
         "--strict", str(CHAPTER)],
        capture_output=True, text=True, cwd=tmp_path, timeout=80,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report  # --strict: 1 on an unexpected failure
    rows = [re.split(r"\s{2,}", line) for line in result.stdout.splitlines()]
    header = rows[0]
    (row,) = [dict(zip(header, cells)) for cells in rows if cells[0] == CHAPTER.stem]
    assert row["unexpected failures"] == "0", report
    assert row["torch"] == importlib.metadata.version("torch")
    assert f"| {CHAPTER.stem} | {row['torch']} |" in summary.read_text()
    # The first cell installed gradbook, and into the throwaway environment.
    assert (site / "gradbook" / "__init__.py").exists(), report
    assert CHAPTER.read_bytes() == stored  # it ran a copy
