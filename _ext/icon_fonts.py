"""The theme's icons without its 1.5 MB icon script: Font Awesome's own web fonts, cut down to
the glyphs the site uses.

pydata-sphinx-theme draws `<i class="fa-solid fa-rocket">` icons with `fontawesome.js`, a
1.49 MB script (0.54 MB compressed) holding every Font Awesome icon as SVG. Its stylesheet
already carries Font Awesome's web-font rules (`.fa-rocket:before{content:"\\f135"}`, the
`@font-face`s), which it uses for admonition and breadcrumb icons. So, once the site is built:

1. every page's `<script src=".../fontawesome.js">` is removed, and the script with it: the
   same `<i>` elements are then drawn by the web-font rules;
2. the three web fonts (solid, regular, brands: 300 KB in all) are subset to the code points
   the site can show: those of every `fa-*` class named in a page or in a script of the site,
   and those of the theme's `--pst-icon-*` variables (admonitions, breadcrumbs, downloads);
3. the theme's stylesheet keeps the `content` rules of those classes only: the 1,881 rules of
   every Font Awesome icon were 20 kB of its 65 kB compressed, and every page waits for the
   stylesheet before its first paint (issue 27).

tests/test_site.py checks that every icon a page names has its glyph in the served font.
"""
import re
from pathlib import Path

from fontTools import subset

FONT_DIR = Path("_static/vendor/fontawesome/webfonts")
THEME_CSS = Path("_static/styles/pydata-sphinx-theme.css")
SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')
ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# A rule that only draws icons: every selector is `.fa-name:before` (or `::before`).
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before,?)+)\{content:"\\[0-9a-f]{4,5}"\}')


def icon_code_points(css):
    """{class name: code point} from Font Awesome's `.fa-x:before,.fa-y:before{content:"\\f00d"}`."""
    points = {}
    for selectors, code in re.findall(r'([^{}]+)\{content:"\\([0-9a-f]{4,5})"\}', css):
        for name in re.findall(r"\.(fa-[a-z0-9-]+)::?before", selectors):
            points[name] = int(code, 16)
    return points


def theme_variable_code_points(css):
    """The code points of the theme's `--pst-icon-*: "\\f0eb"` variables."""
    return {int(code, 16) for code in re.findall(r'--pst-icon-[a-z-]+:"\\([0-9a-f]{4,5})"', css)}


def without_unused_icon_rules(css, used):
    """`css` less each `.fa-x:before{content:"..."}` rule none of whose classes is in `used`."""

    def keep_if_used(rule):
        names = re.findall(r"\.(fa-[a-z0-9-]+)::?before", rule.group(1))
        return rule.group(0) if set(names) & used else ""

    return ICON_RULE.sub(keep_if_used, css)


def used_icon_classes(outdir):
    names = set()
    for path in outdir.rglob("*"):
        if path.suffix in (".html", ".js") and path.name != "fontawesome.js":
            names |= set(ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def subset_font(path, code_points):
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    font = subset.load_font(str(path), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(code_points))
    subsetter.subset(font)
    subset.save_font(font, str(path), options)


def slim_icons(app, exception):
    if exception or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    css = (outdir / THEME_CSS).read_text(encoding="utf-8")
    points = icon_code_points(css)
    used = used_icon_classes(outdir)
    needed = {points[name] for name in used if name in points}
    needed |= theme_variable_code_points(css)
    (outdir / THEME_CSS).write_text(without_unused_icon_rules(css, used), encoding="utf-8")
    for font in sorted((outdir / FONT_DIR).glob("*.woff2")):
        subset_font(font, needed)
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        slimmer = SCRIPT.sub("", text)
        if slimmer != text:
            page.write_text(slimmer, encoding="utf-8")
    for name in ("fontawesome.js", "fontawesome.js.map"):
        (outdir / "_static" / "scripts" / name).unlink(missing_ok=True)


def setup(app):
    app.connect("build-finished", slim_icons)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
