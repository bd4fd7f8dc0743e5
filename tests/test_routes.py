"""The routes by goal (_ext/routes.py): each reaches its goal in at most two hours by the
reading-time model, and every step names a chapter and a section that exist."""

import pytest

from conftest import ROOT

import routes  # _ext/, on the path by conftest.py

ROUTE_LIMIT_MINUTES = 120  # issue 23


@pytest.mark.parametrize("route", routes.ROUTES, ids=lambda route: route["name"])
def test_a_route_takes_at_most_two_hours(route):
    assert routes.route_minutes(ROOT, route) <= ROUTE_LIMIT_MINUTES


def test_every_step_is_a_chapter_or_one_of_its_sections():
    for route in routes.ROUTES:
        for docname, section in route["steps"]:
            assert (ROOT / f"{docname}.ipynb").exists(), docname
            minutes = routes.step_minutes(ROOT, docname, section)  # raises for a missing section
            assert minutes > 0, (docname, section)


def test_a_section_ends_where_the_next_begins():
    markdown = [{"cell_type": "markdown", "source": text} for text in
                ("# Title", "(label)=\n## First", "more", "## Second", "end")]
    assert routes.section_cells(markdown, "First") == markdown[1:3]
    assert routes.section_cells(markdown, "Second") == markdown[3:]
    with pytest.raises(ValueError, match="no section '## Third'"):
        routes.section_cells(markdown, "Third")


def test_a_chapter_names_where_its_steps_fall():
    route = {"name": "r", "steps": [("a", None), ("b", "x"), ("b", "y"), ("c", None), ("b", "z")]}
    assert routes.steps_here(route, "a") == ("step 1", 1)
    assert routes.steps_here({"name": "r", "steps": route["steps"][:4]}, "b") == ("steps 2-3", 3)
    assert routes.steps_here(route, "b") == ("steps 2, 3, 5", 5)
