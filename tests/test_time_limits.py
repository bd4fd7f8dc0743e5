"""No test can hang the suite (issue 21): pytest.ini gives every test a time limit, and a test
that exceeds it fails with its name while the rest of the run goes on and reports."""
import configparser
import subprocess
import sys
import textwrap
import time

from conftest import ROOT

STUCK_TESTS = '''
import time

def test_that_never_returns():
    while True:
        time.sleep(1)

def test_that_spins_in_python():
    while True:
        pass

def test_that_finishes():
    assert True
'''


def suite_setting(name):
    config = configparser.ConfigParser()
    config.read(ROOT / "pytest.ini")
    return config["pytest"][name]


def test_every_test_of_the_suite_has_a_time_limit():
    assert 0 < float(suite_setting("timeout")) <= 300
    assert suite_setting("timeout_method") == "signal"
    # nbval's own limit per cell sits below it, so that nbval interrupts a stuck cell itself.
    cell_limit = suite_setting("addopts").split("--nbval-cell-timeout")[1].split()[0]
    assert 0 < float(cell_limit) < float(suite_setting("timeout"))


def test_a_stuck_test_fails_within_its_limit_and_is_named(tmp_path):
    """Two stuck tests and one that passes, on two xdist workers, with the suite's own settings
    (pytest.ini) except a limit of 1 s: both stuck tests fail by name, the third passes."""
    (tmp_path / "test_stuck.py").write_text(textwrap.dedent(STUCK_TESTS))
    command = [
        sys.executable, "-m", "pytest", "-c", str(ROOT / "pytest.ini"), "--rootdir", str(tmp_path),
        "-p", "no:cacheprovider", "-o", "timeout=1", "--numprocesses", "2", str(tmp_path / "test_stuck.py"),
    ]
    started = time.monotonic()
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=90)
    took = time.monotonic() - started
    report = run.stdout + run.stderr
    assert run.returncode == 1, report
    assert "FAILED test_stuck.py::test_that_never_returns - Failed: Timeout" in report, report
    assert "FAILED test_stuck.py::test_that_spins_in_python - Failed: Timeout" in report, report
    assert "2 failed, 1 passed" in report, report
    # Each stuck test is cut off at 1 s; the rest is starting Python and two workers.
    assert took < 30, f"the run took {took:.0f} s"
