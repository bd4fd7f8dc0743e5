"""What the book is made of, read from _toc.yml and book/: shared by the test modules."""
import yaml

from conftest import BOOK, ROOT

TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def toc_files(node):
    """Every `file:` entry of _toc.yml, at any depth."""
    if isinstance(node, dict):
        if "file" in node:
            yield node["file"]
        for value in node.values():
            yield from toc_files(value)
    elif isinstance(node, list):
        for item in node:
            yield from toc_files(item)


def toc_pages():
    """Every page of the book in reading order, the root page first."""
    return [TOC["root"], *toc_files(TOC)]


def toc_notebooks():
    return {ROOT / f"{page}.ipynb" for page in toc_pages() if (ROOT / f"{page}.ipynb").exists()}


def book_notebooks():
    return {path for path in BOOK.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts}
