"""draw_decision: a question, its answers' boxes with their cases, bad input explained."""
import re

import pytest

from gradbook.decision import draw_decision

ANSWERS = {
    "yes": ("raises", ["b, default", "a, min-cut"]),
    "no": ("missing", ["a, default"]),
}


def test_each_answer_is_an_arrow_to_a_box_listing_its_cases():
    graph = draw_decision("does the guard\nreach x?", ANSWERS)
    titles = re.findall(r"<title>(.*?)</title>", graph.svg)
    assert "question&#45;&gt;answer0" in titles and "question&#45;&gt;answer1" in titles
    texts = [
        text.replace("&#160;", " ").replace("&#45;", "-").strip()
        for text in re.findall(r">([^<>]+)</text>", graph.svg)
    ]
    assert texts[:2] == ["does the guard", "reach x?"]  # the newline breaks the line
    assert texts[2:] == ["raises", "b, default", "a, min-cut", "yes",
                         "missing", "a, default", "no"]
    assert graph.description == (
        "Decision: does the guard reach x? yes: raises (b, default; a, min-cut). "
        "no: missing (a, default)."
    )
    assert graph.node_count == 3
    assert graph.answers["no"] == ("missing", ["a, default"])


def test_the_same_decision_gives_the_same_svg():
    assert draw_decision("q?", ANSWERS).svg == draw_decision("q?", ANSWERS).svg


@pytest.mark.parametrize(
    "question, answers, error, expected",
    [
        ("", ANSWERS, TypeError, "question must be a non-empty string"),
        ("q?", {"yes": ANSWERS["yes"]}, ValueError, "2 or 3 answers"),
        ("q?", {"yes": "raises", "no": ANSWERS["no"]}, TypeError, "a pair"),
        ("q?", {"yes": ("raises", []), "no": ANSWERS["no"]}, TypeError,
         "non-empty list of strings"),
        ("q?", {1: ANSWERS["yes"], "no": ANSWERS["no"]}, TypeError, "label"),
    ],
)
def test_bad_arguments_say_what_is_wrong(question, answers, error, expected):
    with pytest.raises(error, match=expected):
        draw_decision(question, answers)
