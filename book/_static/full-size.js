// On a narrow screen, a drawing or plot (or the intro's diagram of the routes) that is scaled
// down to fit its column gets a button that shows it at its own size, scrolling sideways
// inside its box; pressed again, it fits the column again. The button sits in a strip that
// the stylesheet keeps free above every graph on such screens (code-and-math.css), so it
// covers no label and adding it moves nothing.
(() => {
  const GRAPHS = 'div.cell_output svg[role="img"], div.cell_output > img, div.routes-diagram > svg';
  const LABELS = { fit: "Show at full size", full: "Fit to the column" };
  // The same breakpoint as the stylesheet's strip.
  const NARROW = window.matchMedia("(max-width: 959.98px)");

  const naturalWidth = (graph) =>
    graph.tagName === "IMG" ? graph.naturalWidth : graph.width.baseVal.value;

  const parts = new Map(); // box -> {graph, button}

  // Every size is read before any button changes: reading a size after a change would make
  // the browser lay the whole page out again, once per graph (issue 27: on a long page that
  // blocked the main thread for tenths of a second on Lighthouse's slow phone).
  function update(boxes) {
    const states = boxes.map((box) => {
      const { graph, button } = parts.get(box);
      const full = box.classList.contains("graph-full-size");
      const scaled = naturalWidth(graph) > graph.getBoundingClientRect().width + 1;
      return { button, full, scaled };
    });
    for (const { button, full, scaled } of states) {
      button.hidden = !(full || (scaled && NARROW.matches));
      button.textContent = full ? LABELS.full : LABELS.fit;
      button.setAttribute("aria-pressed", String(full));
    }
  }

  // Called once for each box after its first layout (and again when its size changes, as when
  // an image arrives or the window turns): no size is read before the page is laid out.
  const observer = new ResizeObserver((entries) => update(entries.map((entry) => entry.target)));

  function offerFullSize(graph) {
    const box = graph.parentElement;
    box.classList.add("graph-box");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "graph-size-button";
    button.hidden = true;
    button.addEventListener("click", () => {
      box.classList.toggle("graph-full-size");
      update([box]);
    });
    box.prepend(button);
    parts.set(box, { graph, button });
    observer.observe(box);
  }

  document.querySelectorAll(GRAPHS).forEach(offerFullSize);
})();
