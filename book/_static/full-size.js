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

  function update(graph, button) {
    const box = graph.parentElement;
    const full = box.classList.contains("graph-full-size");
    const scaled = naturalWidth(graph) > graph.getBoundingClientRect().width + 1;
    button.hidden = !(full || (scaled && NARROW.matches));
    button.textContent = full ? LABELS.full : LABELS.fit;
    button.setAttribute("aria-pressed", String(full));
  }

  function offerFullSize(graph) {
    const box = graph.parentElement;
    box.classList.add("graph-box");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "graph-size-button";
    button.addEventListener("click", () => {
      box.classList.toggle("graph-full-size");
      update(graph, button);
    });
    box.prepend(button);
    update(graph, button);
    new ResizeObserver(() => update(graph, button)).observe(box);
    if (graph.tagName === "IMG" && !graph.complete) {
      graph.addEventListener("load", () => update(graph, button));
    }
  }

  document.querySelectorAll(GRAPHS).forEach(offerFullSize);
})();
