() => {
  // "Watch it learn", drawn in the browser from the payload LearnSection.payload sends once per
  // choice of models and sentence: for each side, every recorded point of its training run (target
  // pieces, validation BLEU, training loss, and what it wrote for the sentence with its α). Moving
  // the slider redraws both sides at the chosen number of target pieces (each side shows its last
  // point at or before it) without asking the server: an α grid (a canvas, one pixel a weight, CSS
  // scales it), the translation, and a chart of the run with a marker at the point.
  // window.attnLearn.view(id) is the view bound to the page element with that id.
  // Pieces are model output and user text: written with textContent, never as markup.
  const SVG = "http://www.w3.org/2000/svg";
  const CELL = 14;  // CSS pixels a weight: a 12 px label fits beside each row and under each column
  const CHART = { height: 186, left: 44, right: 44, top: 28, bottom: 34 };
  const BLEU_COLOUR = "#1f4e9e", LOSS_COLOUR = "#a34700";  // ≥ 4.5:1 on white (WCAG AA)

  function node(tag, attributes = {}, parent = null, text = null, namespace = null) {
    const element = namespace ? document.createElementNS(namespace, tag) : document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text !== null) element.textContent = text;
    if (parent) parent.appendChild(element);
    return element;
  }
  const svgNode = (tag, attributes, parent, text = null) => node(tag, attributes, parent, text, SVG);
  const millions = (pieces) => (pieces / 1e6).toLocaleString("en", { maximumFractionDigits: 2 }) + "M";

  // The last point of a run at or before `pieces` target pieces (null before its first).
  function pointAt(points, pieces) {
    let found = null;
    for (const point of points) if (point.target_pieces <= pieces) found = point;
    return found;
  }

  class Side {
    constructor(parent, side, positions, table) {
      this.side = side;
      this.table = table;
      this.root = node("div", { class: "attn-learn-side" }, parent);
      this.root.style.setProperty("--attn-learn-cell", `${CELL}px`);  // the labels' rows and columns (CSS)
      node("h3", {}, this.root, side.title);
      if (side.message) node("p", { class: "attn-learn-message" }, this.root, side.message);
      if (!side.points.length) return;
      this.status = node("p", { class: "attn-learn-status" }, this.root);
      this.translation = node("p", { class: "attn-learn-translation", lang: "fr" }, this.root);
      if (side.points.some((point) => point.alpha)) this.buildGrid();
      this.buildChart(positions[positions.length - 1]);
    }

    buildGrid() {
      const box = node("div", { class: "attn-learn-grid-box", tabindex: "0" }, this.root);
      this.grid = node("div", { class: "attn-learn-grid" }, box);
      node("div", {}, this.grid);  // the corner above the row labels
      this.columns = node("div", { class: "attn-learn-columns" }, this.grid);
      this.rows = node("div", { class: "attn-learn-rows" }, this.grid);
      this.canvas = node("canvas", { role: "img" }, this.grid);
      this.hover = node("p", { class: "attn-learn-hover" }, this.root, "Hover or tap a cell for its α.");
      const pick = (event) => {
        const box = this.canvas.getBoundingClientRect();
        const j = Math.floor((event.clientX - box.left) / CELL), t = Math.floor((event.clientY - box.top) / CELL);
        const point = this.shown;
        if (!point?.alpha || t < 0 || j < 0 || t >= point.alpha.length || j >= point.alpha[t].length) return;
        this.hover.textContent = `${point.french_pieces[t]} ← ${point.english_pieces[j]}: α = ${point.alpha[t][j].toFixed(3)}`;
      };
      this.canvas.addEventListener("mousemove", pick);
      this.canvas.addEventListener("click", pick);
    }

    buildChart(lastPieces) {
      const points = this.side.points;
      const width = Math.max(300, Math.min(560, this.root.clientWidth || 360));
      const svg = svgNode("svg", { width, height: CHART.height, class: "attn-learn-chart", role: "img",
        "aria-label": `Validation BLEU and training loss of this run at each of its ${points.length} points` }, this.root);
      const plotWidth = width - CHART.left - CHART.right, plotHeight = CHART.height - CHART.top - CHART.bottom;
      const maxBleu = Math.max(10, ...points.map((p) => p.valid_bleu)), maxLoss = Math.max(...points.map((p) => p.loss));
      this.x = (pieces) => CHART.left + plotWidth * pieces / Math.max(1, lastPieces);
      const yBleu = (v) => CHART.top + plotHeight * (1 - v / maxBleu), yLoss = (v) => CHART.top + plotHeight * (1 - v / maxLoss);
      svgNode("line", { x1: CHART.left, x2: CHART.left + plotWidth, y1: CHART.top + plotHeight, y2: CHART.top + plotHeight,
        stroke: "#555" }, svg);
      const line = (y, colour) => svgNode("polyline", { fill: "none", stroke: colour, "stroke-width": 2,
        points: points.map((p) => `${this.x(p.target_pieces)},${y(p)}`).join(" ") }, svg);
      line((p) => yBleu(p.valid_bleu), BLEU_COLOUR);
      line((p) => yLoss(p.loss), LOSS_COLOUR);
      const label = (x, y, text, colour, anchor) => svgNode("text", { x, y, fill: colour, "font-size": 12, "text-anchor": anchor }, svg, text);
      label(CHART.left - 4, CHART.top + 10, maxBleu.toFixed(0), BLEU_COLOUR, "end");
      label(CHART.left - 4, CHART.top + plotHeight, "0", BLEU_COLOUR, "end");
      label(CHART.left + plotWidth + 4, CHART.top + 10, maxLoss.toFixed(1), LOSS_COLOUR, "start");
      label(CHART.left, CHART.height - 18, "0", "#333", "middle");
      label(CHART.left + plotWidth, CHART.height - 18, millions(lastPieces), "#333", "middle");
      label(CHART.left + plotWidth / 2, CHART.height - 4, "target pieces trained on", "#333", "middle");
      label(CHART.left, 14, "validation BLEU", BLEU_COLOUR, "start");
      label(CHART.left + plotWidth, 14, "training loss", LOSS_COLOUR, "end");
      this.marker = svgNode("line", { y1: CHART.top, y2: CHART.top + plotHeight, stroke: "#d62728", "stroke-width": 2 }, svg);
    }

    show(pieces) {
      if (!this.status) return;
      const point = pointAt(this.side.points, pieces);
      this.shown = point;
      if (!point) {
        this.status.textContent = `Its run starts at ${millions(this.side.points[0].target_pieces)} target pieces.`;
        this.translation.textContent = "";
        return;
      }
      this.status.textContent = `After ${point.target_pieces.toLocaleString("en")} target pieces: validation BLEU ` +
        `${point.valid_bleu.toFixed(2)}, training loss ${point.loss.toFixed(3)}`;
      this.translation.textContent = point.translation || "(nothing)";
      this.marker.setAttribute("x1", this.x(point.target_pieces));
      this.marker.setAttribute("x2", this.x(point.target_pieces));
      if (this.canvas && point.alpha) this.drawGrid(point);
    }

    drawGrid(point) {
      const T = point.alpha.length, S = point.english_pieces.length;
      if (this.columnsFor !== point.english_pieces.join("\u0000")) {  // the same sentence at every point
        this.columns.textContent = "";
        for (const piece of point.english_pieces) node("span", {}, this.columns, piece);
        this.columnsFor = point.english_pieces.join("\u0000");
      }
      this.rows.textContent = "";
      for (const piece of point.french_pieces) node("span", {}, this.rows, piece);
      this.canvas.width = S;
      this.canvas.height = T;
      Object.assign(this.canvas.style, { width: `${S * CELL}px`, height: `${T * CELL}px` });
      const most = point.alpha.map((row, t) => {  // in words, as the page's grids say it (views/figures.py)
        const j = row.indexOf(Math.max(...row));
        return `${point.french_pieces[t]} ← ${point.english_pieces[j]} (α ${row[j].toFixed(2)})`;
      });
      this.canvas.setAttribute("aria-label", `α: ${T} French pieces (rows) by ${S} English pieces (columns). ` +
        `The English piece each French piece attends to most: ${most.join("; ")}.`);
      window.attnSteps.draw.paint(this.canvas, point.alpha, this.table, true);  // on the grids' colours, as α
    }
  }

  class LearnView {
    constructor(root) {
      this.root = root;
      this.payload = null;
      this.timer = null;
    }

    load(payload) {
      this.stopPlaying();
      this.payload = payload;
      this.root.textContent = "";
      const table = window.attnSteps.colourTable(payload.colorscale);
      const row = node("div", { class: "attn-learn-sides" }, this.root);
      this.sides = payload.sides.map((side) => new Side(row, side, payload.positions, table));
      this.show(payload.positions.length);
    }

    // Both sides at point i (1-based) of the merged positions.
    show(i) {
      if (!this.payload) return 1;
      const positions = this.payload.positions;
      this.index = Math.max(1, Math.min(positions.length, Number(i) || 1));
      for (const side of this.sides) side.show(positions[this.index - 1]);
      return this.index;
    }

    // Play: one point every interval from the first (or from where the slider is) to the last; a
    // second press stops. Returns the point shown, for the slider.
    play(i, interval) {
      if (this.timer !== null || !this.payload) {
        this.stopPlaying();
        return this.show(i);
      }
      const slider = document.querySelector(`#${this.root.id}-slider input[type=range]`);
      const button = document.getElementById(`${this.root.id}-play`);
      if (button) button.textContent = "⏸ Stop";
      let index = Number(i) >= this.payload.positions.length ? 1 : Number(i);
      this.timer = setInterval(() => {
        index += 1;
        if (index > this.payload.positions.length) return this.stopPlaying();
        this.show(index);
        if (slider) {
          slider.value = index;
          slider.dispatchEvent(new Event("input", { bubbles: true }));
        }
      }, interval);
      return this.show(index);
    }

    stopPlaying() {
      clearInterval(this.timer);
      this.timer = null;
      const button = this.root && document.getElementById(`${this.root.id}-play`);
      if (button) button.textContent = "▶ Play";
    }
  }

  const views = new Map();  // element id → its LearnView
  window.attnLearn = {
    view(id) {
      const root = document.getElementById(id);
      if (!views.has(id) || views.get(id).root !== root) views.set(id, new LearnView(root));
      return views.get(id);
    },
  };
}
