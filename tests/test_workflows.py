"""The GitHub workflows pass actionlint and keep write permissions to the deploy job."""
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
WRITE_SCOPES = {"pages", "id-token"}


def actionlint():
    beside_python = Path(sys.executable).with_name("actionlint")
    return str(beside_python) if beside_python.exists() else shutil.which("actionlint")


def test_workflows_pass_actionlint():
    assert WORKFLOWS, "no workflow under .github/workflows"
    binary = actionlint()
    assert binary, "actionlint is missing: pip install -r requirements.txt"
    result = subprocess.run([binary, *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_permissions_are_read_only_except_in_the_deploy_job():
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        assert workflow.get("permissions") == {"contents": "read"}, path.name
        for name, job in workflow["jobs"].items():
            granted = {scope for scope, level in job.get("permissions", {}).items() if level == "write"}
            if name == "deploy":
                assert granted == WRITE_SCOPES, f"{path.name}: deploy needs exactly {WRITE_SCOPES}"
            else:
                assert not granted, f"{path.name}: job {name} should not write {granted}"
