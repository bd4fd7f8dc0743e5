"""A button on each graph that the page scales down, to show it at its own size (issue 23:
on a phone, the tape after backward is 585 px wide in a 358 px column). The script is
deferred, so the first paint does not wait for it; book/_static/full-size.js says the rest."""


def setup(app):
    app.add_js_file("full-size.js", defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
