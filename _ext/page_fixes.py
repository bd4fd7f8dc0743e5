"""Three fixes to the HTML that Sphinx and its extensions hand to each page.

1. sphinx-thebe and sphinx-togglebutton add inline scripts (`const THEBE_JS_URL = ...`)
   after the HTML builder exists; Sphinx 7.4 then keeps each twice, once with filename None
   and once with filename "", and the browser reports the repeated `const` as a
   redeclaration error on every page. Files are already deduplicated by name; this does the
   same for inline bodies.
2. docutils marks bibliography entries `role="doc-biblioentry"`, a role ARIA has deprecated,
   inside a `role="list"`; a list must hold list items, so screen readers (and axe) find an
   empty list. The entries are list items.
3. On a first visit the theme's head script sets `data-theme="auto"`, and its deferred script
   resolves it to light or dark only once the whole page is parsed. Until then the colours
   that only light and dark define are missing, the border of inline code among them; when
   they arrive, inline code grows by 2 px and long pages rewrap lines above the fold (a layout
   shift of 0.13 on two chapters, Lighthouse's CLS). A head script resolves it at once, as
   the theme will.
"""

# Runs in <head>, after the theme's own inline script and before the body is laid out.
RESOLVE_AUTO_THEME = """
if (document.documentElement.dataset.theme === "auto") {
  const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}
"""


def drop_repeated_scripts(context):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        filename = getattr(script, "filename", script) or ""  # None and "" both mean inline
        key = (filename, tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def fix_page(app, pagename, templatename, context, doctree):
    drop_repeated_scripts(context)
    if "body" in context:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app):
    app.add_js_file(None, body=RESOLVE_AUTO_THEME)
    app.connect("html-page-context", fix_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
