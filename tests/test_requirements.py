"""Binder installs what the chapters import, with the same pins as the root requirements."""
import ast
import re
import sys

import nbformat

from conftest import BOOK, ROOT
from book_files import book_notebooks

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$")
# Import names that differ from the name of the package that provides them
# (torch's wheel ships the functorch package).
PACKAGE_OF_MODULE = {"yaml": "pyyaml", "functorch": "torch"}
# Modules of the Jupyter kernel itself: every place that runs a chapter
# (Binder, Colab, nbval) has them before any requirement is installed.
KERNEL_MODULES = {"IPython"}
LOCAL_MODULES = {path.name for path in BOOK.iterdir() if (path / "__init__.py").exists()}


def pins(path):
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            match = PIN.match(line)
            assert match, f"{path.name}: '{line}' is not pinned with =="
            found[match.group(1).lower()] = match.group(2)
    return found


OPTIONAL = {"ImportError", "ModuleNotFoundError"}


def optional_imports(tree):
    """Imports in the body of a `try` that catches ImportError: the code runs without them
    (for example a helper used only where the book is built)."""
    return {
        id(node)
        for guard in ast.walk(tree)
        if isinstance(guard, ast.Try)
        and any(isinstance(handler.type, ast.Name) and handler.type.id in OPTIONAL for handler in guard.handlers)
        for statement in guard.body
        for node in ast.walk(statement)
    }


def imported_modules(source):
    """The top-level modules `source` imports unconditionally."""
    # Drop IPython magics (%xmode ...), which are not Python.
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%")))
    optional = optional_imports(tree)
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


def chapter_sources():
    for path in book_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                yield cell.source
    for path in BOOK.rglob("*.py"):
        yield path.read_text()


def test_binder_pins_match_the_root_pins():
    root, binder = pins(ROOT / "requirements.txt"), pins(ROOT / "binder" / "requirements.txt")
    assert binder, "binder/requirements.txt pins nothing"
    for package, version in binder.items():
        assert root.get(package) == version, f"{package}: binder has {version}, root {root.get(package)}"


def test_an_import_guarded_by_import_error_is_optional_and_no_other():
    source = (
        "import numpy\n"
        "try:\n    from myst_nb import glue\nexcept ImportError:\n    glue = None\n"
        "try:\n    import scipy\nexcept ValueError:\n    pass\n"
    )
    assert sorted(imported_modules(source)) == ["numpy", "scipy"]


def test_binder_installs_every_package_the_chapters_import():
    binder = pins(ROOT / "binder" / "requirements.txt")
    third_party = {
        PACKAGE_OF_MODULE.get(module, module).lower()
        for source in chapter_sources()
        for module in imported_modules(source)
        if module not in sys.stdlib_module_names
        and module not in LOCAL_MODULES | KERNEL_MODULES
    }
    assert third_party - set(binder) == set()


def test_binder_gets_cpu_torch_python_311_and_graphviz():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    assert "graphviz" in (ROOT / "binder" / "apt.txt").read_text().split()
