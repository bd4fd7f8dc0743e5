"""Mathematics rendered when the site is built: LaTeX becomes MathML, which browsers draw
themselves, so no page loads MathJax (1.2 MB of script plus its fonts) to typeset it.

`html_math_renderer: mathml` (in _config.yml) selects this renderer. latex2mathml does the
conversion; an expression it cannot convert is a build warning, and the build runs with -W,
so a chapter cannot ship raw LaTeX by accident. Display equations keep Sphinx's numbering and
permalinks. MathML is read by screen readers as mathematics, as MathJax's output was.
"""
import html
import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)


def to_mathml(translator, node, latex, display):
    try:
        mathml = convert(latex, display=display)
    except Exception as error:  # latex2mathml raises its own exception types, and others
        logger.warning("cannot render math %r as MathML: %s", latex, error, location=node)
        return f'<code class="math-error">{html.escape(latex)}</code>'
    # latex2mathml leaves commands it does not know as text; a backslash in the output is one.
    if "\\" in _text_of(mathml):
        logger.warning("math %r has a command MathML cannot show: %s", latex, mathml, location=node)
    return mathml


def _text_of(mathml):
    return html.unescape(re.sub(r"<[^>]*>", "", mathml))


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math"))
    self.body.append(to_mathml(self, node, node.astext(), "inline"))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    latex = node.astext()
    parts = [latex] if node.get("nowrap") else [part for part in latex.split("\n\n") if part.strip()]
    for part in parts:
        if r"\\" in part and r"\begin" not in part:
            part = r"\begin{aligned}" + part + r"\end{aligned}"
        # An equation wider than the column scrolls (code-and-math.css); a scrolling region must
        # be reachable from the keyboard, so a display equation can take the focus.
        self.body.append(to_mathml(self, node, part, "block").replace("<math ", '<math tabindex="0" ', 1))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
