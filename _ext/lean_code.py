"""Code blocks without the spans that change nothing.

Pygments wraps every token of highlighted code in a span, and the theme's styles (pygments.css,
light and dark) give names, punctuation and whitespace exactly the code block's own colour. So
more than half of a chapter's elements are spans that only repeat their block's colour: bytes
for every reader, and work for the browser and for the accessibility audit, which checks the
contrast of each element (tests/test_site.py).

Once the site is built, this finds in _static/pygments.css the token classes whose only
declaration, in light and in dark mode, is the colour of `.highlight` itself; removes those
spans (keeping their text) from every code block of every page; and gives `.highlight pre` that
colour, which the removed spans used to carry. What a reader sees is unchanged, which the
site tests check in both modes through the audit's contrast rule.
"""
import re
from pathlib import Path

RULE = re.compile(r'html\[data-theme="(light|dark)"\] \.highlight(?: \.([a-zA-Z0-9]+))? \{ ([^}]*) \}')
CODE_BLOCK = re.compile(r'(<div class="highlight"><pre>)(.*?)(</pre>)', re.S)


def plain_token_classes(css):
    """({class,...} whose spans can go, {mode: colour of .highlight})."""
    base, tokens = {}, {}
    for mode, token, declarations in RULE.findall(css):
        declarations = declarations.strip().rstrip(";").strip()
        if not token:
            colour = re.search(r"(?:^|;)\s*color:\s*(#[0-9A-Fa-f]+)", declarations)
            if colour:
                base[mode] = colour.group(1).lower()
        else:
            tokens.setdefault(token, {})[mode] = declarations.lower()
    plain = {
        token for token, modes in tokens.items()
        if set(modes) == set(base) == {"light", "dark"}
        and all(modes[mode] == f"color: {base[mode]}" for mode in modes)
    }
    return plain, base


def unwrap(html, classes):
    if not classes:
        return html
    span = re.compile(r'<span class="(?:%s)">([^<]*)</span>' % "|".join(sorted(map(re.escape, classes))))
    return CODE_BLOCK.sub(lambda block: block.group(1) + span.sub(r"\1", block.group(2)) + block.group(3), html)


def lean_code(app, exception):
    if exception or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    stylesheet = outdir / "_static" / "pygments.css"
    css = stylesheet.read_text(encoding="utf-8")
    classes, base = plain_token_classes(css)
    if not classes:
        return
    marker = "/* lean_code: the colour the removed token spans carried */"
    if marker not in css:
        rules = "".join(f'html[data-theme="{mode}"] .highlight pre {{ color: {colour} }}\n' for mode, colour in sorted(base.items()))
        stylesheet.write_text(css + f"\n{marker}\n{rules}", encoding="utf-8")
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        leaner = unwrap(text, classes)
        if leaner != text:
            page.write_text(leaner, encoding="utf-8")


def setup(app):
    # After pydata-sphinx-theme writes its light and dark pygments.css (a build-finished handler
    # of a theme registered after the extensions: hence the later priority).
    app.connect("build-finished", lean_code, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
