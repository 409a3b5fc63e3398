(watch) => {
  // Every Plotly figure is read by a screen reader as its text alternative (WCAG 1.1.1), not as a
  // picture it cannot see: views/figures.py writes the alternative into the figure's layout.meta.text,
  // from the numbers the figure draws, and this gives it to the plot as its aria-label, with role
  // figure (not img: the plot keeps its own controls, and an image's inside is hidden from a
  // reader), whenever a figure is drawn or redrawn (watch: page_changes.js).
  // The text is escaped like the figure's labels; it is decoded in an inert document, never run.
  const decode = (escaped) => new DOMParser().parseFromString(escaped, "text/html").documentElement.textContent;
  const described = new WeakMap();  // plot → the text it was given
  watch((scope) => {
    for (const plot of scope.querySelectorAll(".js-plotly-plot")) {
      const escaped = plot.layout?.meta?.text;
      if (!escaped || described.get(plot) === escaped) continue;
      described.set(plot, escaped);
      plot.setAttribute("role", "figure");
      plot.setAttribute("aria-label", decode(escaped));
    }
  });
}
