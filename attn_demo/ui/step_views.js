() => {
  // The decoder-step view, drawn in the browser from the payload the server sends once per
  // translation (TranslateSection.step_data, built by attn_demo.views.steps.step_payload). Each model's
  // view is five panels, top to bottom: the query, the scores e_tj, the weights α_tj, the rows
  // α_tj·h_j with the model's c_t under them, and the h_j in 2-D with c_t as their α-weighted
  // centroid. A model without attention has no query, e or α: its view shows the one fixed c and
  // the h_j in 2-D with c's star, which stays where it is at every step. The panels are built once
  // per translation (and on resize or large text); a step change only rewrites the numbers that
  // move, in a few milliseconds, with no request.
  //
  // window.attnSteps.group(id) is the step views of one page element (a scrubber and its step
  // slots, elements of class attn-step-slot, filled in order from the payload's views, and its
  // network slots, class attn-network-slot, filled the same way by network_view.js); a page may
  // hold several such groups.
  // Pieces are user text: they are written as text (textContent, a text node's data), never as markup.
  // tests/ui/test_browser.py checks the drawn numbers against the model's trace.

  const PLAY_INTERVAL_MS = 1000;
  const HIGHLIGHT = "#d62728", MUTED = "#7f9ec9";
  const SVG = "http://www.w3.org/2000/svg";

  // Sizes in CSS pixels, normal and large text (projector). A piece's column is never narrower
  // than a vertical label's line, so labels never overlap: a long sentence scrolls sideways.
  const SIZES = {
    normal: { font: 13, column: 22, bars: 120, row: 17, strip: 22, pca: 300, gutter: 56 },
    large: { font: 20, column: 32, bars: 170, row: 25, strip: 32, pca: 420, gutter: 80 },
  };

  // A typed array {dtype: "f4", bdata: base64, shape: "T, S"} as rows of Float32Arrays (or one).
  function floats(typed) {
    const all = new Float32Array(Uint8Array.from(atob(typed.bdata), (c) => c.charCodeAt(0)).buffer);
    const shape = typed.shape.split(",").map(Number);
    if (shape.length === 1) return all;
    return Array.from({ length: shape[0] }, (_, i) => all.subarray(i * shape[1], (i + 1) * shape[1]));
  }

  // The running sums of the rows of α (T rows of S): row t is C up to and including step t, in float32.
  function running(weights) {
    const sums = [];
    weights.reduce((sum, row) => {
      const next = row.map((w, j) => Math.fround(sum[j] + w));
      sums.push(next);
      return next;
    }, new Float32Array(weights[0].length));
    return sums;
  }

  function node(tag, attributes = {}, parent = null, namespace = null) {
    const element = namespace ? document.createElementNS(namespace, tag) : document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (parent) parent.appendChild(element);
    return element;
  }
  const svgNode = (tag, attributes, parent) => node(tag, attributes, parent, SVG);

  // A line's words at a step, changed where they stand: the data of its text node, not a new node. A step rewrites a
  // hundred lines or more (tooltips, values, captions); new nodes each time would be garbage to collect, and changes to
  // the page's elements that every page watcher (page_changes.js) looks at again.
  function setText(element, text) {
    const only = element.firstChild;
    if (only && only === element.lastChild && only.nodeType === Node.TEXT_NODE) {
      if (only.data !== text) only.data = text;
    } else element.textContent = text;
  }

  // Segments [tag, text] as an element's children: plain text (tag null) and elements of one text each. The same
  // kinds of segments again change only the texts (setText's reasons); other kinds build the children anew.
  function fill(element, segments) {
    const shape = segments.map(([tag]) => tag || "").join(",");
    if (element.attnShape === shape && element.childNodes.length === segments.length) {
      segments.forEach(([tag, text], k) => {
        const words = tag ? element.childNodes[k].firstChild : element.childNodes[k];  // a tag's one text node, made below
        if (words.data !== text) words.data = text;
      });
      return element;
    }
    element.attnShape = shape;
    element.textContent = "";
    for (const [tag, text] of segments) {
      const words = document.createTextNode(text);
      if (!tag) element.appendChild(words);
      else if (tag === "sub" && element instanceof SVGElement) {
        svgNode("tspan", { "baseline-shift": "sub", "font-size": "75%" }, element).appendChild(words);
      } else node(tag, {}, element).appendChild(words);
    }
    return element;
  }

  // Text with subscripts: parts are strings or [base, subscript]; nothing is parsed as markup.
  // SVG text has no <sub>: a lowered, smaller tspan there.
  const write = (element, ...parts) => fill(element, parts.flatMap((part) => (
    typeof part === "string" ? [[null, part]] : [[null, part[0]], ["sub", part[1]]])));

  // Text written upwards: a figure's upward texts share one group turned a quarter to the left, where the figure's point
  // (x, y) is (−y, x). One turn for them all rather than a transform each: every element with a transform of its own
  // is a separate piece of paint, for the browser to sort into layers whenever the page repaints.
  const upwards = (parent) => svgNode("g", { transform: "rotate(-90)" }, parent);
  function placeUpwards(text, x, y) {
    text.setAttribute("x", -y);
    text.setAttribute("y", x);
    return text;
  }

  const textWidth = (text, font) => Math.ceil(0.65 * font * text.length) + 4;  // generous, as figures._text_px

  // A 256-entry colour table from a Plotly colour scale [[0, "rgb(r,g,b)"], …, [1, …]].
  function colourTable(scale) {
    const stops = scale.map(([at, colour]) => [at, colour.match(/\d+/g).map(Number)]);
    const table = new Uint8ClampedArray(256 * 3);
    for (let i = 0; i < 256; i++) {
      const x = i / 255;
      const k = Math.max(1, stops.findIndex(([at]) => at >= x));
      const [a, ca] = stops[k - 1], [b, cb] = stops[k];
      const f = b > a ? (x - a) / (b - a) : 0;
      for (let c = 0; c < 3; c++) table[3 * i + c] = ca[c] + f * (cb[c] - ca[c]);
    }
    return table;
  }

  // A colour table's entry (256 of them) for α in [0, 1], and an entry as CSS.
  const alphaIndex = (v) => Math.round(Math.min(Math.max(v, 0), 1) * 255);
  const tableColour = (table, i) => `rgb(${table[3 * i]},${table[3 * i + 1]},${table[3 * i + 2]})`;

  // Rows of numbers on a canvas, one pixel a number (CSS scales it): signed numbers centred on 0 and scaled by the
  // largest magnitude, or with `alpha`, α in [0, 1] as the alignment grids draw it. Each canvas keeps its image: a
  // step repaints it rather than making one to collect.
  function paint(canvas, rows, table, alpha = false) {
    const width = rows[0].length, context = canvas.getContext("2d");
    if (canvas.attnImage?.width !== width || canvas.attnImage.height !== rows.length) {
      canvas.attnImage = context.createImageData(width, rows.length);
    }
    const data = canvas.attnImage.data;
    let bound = 1;
    if (!alpha) {
      bound = 0;
      for (const row of rows) for (let d = 0; d < width; d++) bound = Math.max(bound, Math.abs(row[d]));
      bound = bound || 1;
    }
    rows.forEach((row, r) => {
      for (let d = 0; d < width; d++) {
        const i = alpha ? alphaIndex(row[d]) : Math.round(((row[d] / bound) + 1) * 127.5), p = 4 * (r * width + d);
        data[p] = table[3 * i]; data[p + 1] = table[3 * i + 1]; data[p + 2] = table[3 * i + 2]; data[p + 3] = 255;
      }
    });
    context.putImageData(canvas.attnImage, 0, 0);
    canvas.attnValues = rows;  // what was drawn, for hover and tests
    canvas.attnBound = bound;
  }

  // Each row j times weights[j], multiplied in float32 as numpy does (a Float32Array rounds what it is given), written
  // into `into`: rows of the same sizes, made once per view, so that a step makes no new arrays to collect.
  function weigh(rows, weights, into) {
    rows.forEach((row, j) => { for (let d = 0; d < row.length; d++) into[j][d] = weights[j] * row[d]; });
    return into;
  }

  // About four round tick values covering [lo, hi].
  function niceTicks(lo, hi) {
    const raw = (hi - lo) / 4 || 1, power = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
    const ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(Number(v.toFixed(10)));
    return ticks;
  }

  class StepView {
    // One model's panels inside its container, laid out for the container's width.
    constructor(container, model, table, large) {
      this.model = model;
      this.table = table;
      this.size = large ? SIZES.large : SIZES.normal;
      this.source = model.source;
      this.target = model.target;
      this.attends = model.weights !== null;  // false: the no-attention baseline, one fixed c
      this.contexts = floats(model.contexts);
      this.annotations = floats(model.annotations);

      container.textContent = "";
      const root = node("div", { class: "attn-step-view" }, container);
      root.style.fontSize = `${this.size.font}px`;
      this.root = root;
      this.title = node("div", { class: "attn-step-title" }, root);
      this.caption = node("div", { class: "attn-step-caption" }, root);
      this.tooltip = node("div", { class: "attn-tooltip", role: "tooltip" }, root);
      this.panels(root, Math.max(container.clientWidth, 240));
    }

    // The panels under the title and caption, for the container's width.
    panels(root, width) {
      const model = this.model, S = this.source.length, D = this.contexts[0].length;
      this.points = floats(model.points);
      this.centres = floats(model.centres);
      if (this.attends) {
        this.queries = floats(model.queries);
        this.scores = floats(model.scores);
        this.weights = floats(model.weights);
        this.coverage = running(this.weights);
        this.queryPanel(root, model.query, this.queries[0].length);
        this.attributionPanel(this.barPanels(root, width, S), model.attribution);
        this.rowsPanel(root, S, D);
        write(this.panelTitle(root), "5. ", ["h", "j"], " in 2-D (PCA of this sentence) and ", ["c", "t"], " ★");
      } else {
        this.fixedPanel(root, D);
        this.attributionPanel(this.scrolling(root, width, S), model.attribution);
        write(this.panelTitle(root), "2. ", ["h", "j"], " in 2-D (PCA of this sentence) and c ★: the same at every step");
      }
      this.scatter(root, width);
    }

    // Bar panels share their piece columns, and scroll sideways together: returns their container.
    scrolling(root, width, S) {
      const scroll = node("div", { class: "attn-scroll" }, root);
      this.plot = Math.max(width - this.size.gutter - 8, S * this.size.column);
      this.slot = this.plot / S;
      return scroll;
    }

    // Asked for on the page (ui/attribution.py): the attribution of log p(y_t) to each English
    // piece, under the α bars, so that where the model looked and what it relied on can be compared.
    attributionPanel(scroll, attribution) {
      this.attribution = attribution ? floats(attribution.scores) : null;
      if (!attribution) return;
      write(this.panelTitle(scroll), "what log p(", ["y", "t"], ") relied on: ", ["A", "tj"], `, ${attribution.label}`,
            this.attends ? " (not part of the model: compare it with α)" : " (this model has no α: this is all there is)");
      this.attributionBars = this.bars(scroll, this.plot, "A");
    }

    // Without attention, the one panel of numbers: c = [→h_S; ←h_1], read at every step.
    fixedPanel(root, D) {
      write(this.panelTitle(root), "1. no query, no scores, no weights: the fixed c = [→", ["h", "S"], "; ←", ["h", "1"],
            `]: (B, 1, D) = (1, 1, ${D})`);
      this.strip = node("canvas", { class: "attn-strip", width: D, height: 1, role: "img",
                                    "aria-label": `the fixed context c: ${D} numbers, red below 0, blue above` }, root);
      this.strip.style.height = `${this.size.strip}px`;
      this.hover(this.strip, (row, d, v) => `c · dim ${d} = ${v.toFixed(3)}`);
    }

    // Panel 1: the query, one coloured cell a dimension.
    queryPanel(root, q, H) {
      write(this.panelTitle(root), "1. query ", q, `: (B, 1, H) = (1, 1, ${H})`);
      this.strip = node("canvas", { class: "attn-strip", width: H, height: 1, role: "img",
                                    "aria-label": `the query: ${H} numbers, red below 0, blue above` }, root);
      this.strip.style.height = `${this.size.strip}px`;
      this.hover(this.strip, (row, d, v) => `query ${q[0]}_${q[1]} · dim ${d} = ${v.toFixed(3)}`);
    }

    // Panels 2 and 3, in one sideways scroll; returns it.
    barPanels(root, width, S) {
      const scroll = this.scrolling(root, width, S);
      write(this.panelTitle(scroll), "2. scores ", ["e", "tj"], `: (B, 1, S) = (1, 1, ${S})`);
      this.scoreBars = this.bars(scroll, this.plot, "e");
      this.weightTitle = this.panelTitle(scroll);  // written at each step: α may have been set by hand there
      this.weightBars = this.bars(scroll, this.plot, "α");
      write(this.panelTitle(scroll), "coverage ", ["C", "j"], " = Σ ", ["α", "t′j"], " up to this step (1 ≈ attended once",
            this.model.counts ? "; the next step's score reads it)" : "; this model's score never reads it)");
      this.coverageBars = this.bars(scroll, this.plot, "C");
      return scroll;
    }

    // Panel 4: a row α_tj·h_j per source piece, then the model's c_t; a row label per row.
    rowsPanel(root, S, D) {
      write(this.panelTitle(root), "4. ", ["α", "tj"], "·", ["h", "j"], `: (S, D) = (${S}, ${D}), and their sum `, ["c", "t"],
            `: (B, 1, D) = (1, 1, ${D})`);
      const rows = node("div", { class: "attn-rows" }, root);
      const labels = node("div", { class: "attn-row-labels" }, rows);
      this.source.forEach((piece, j) => {
        const row = write(node("div", { class: "attn-row-label" }, labels), "α·", ["h", String(j + 1)], " ");
        node("span", {}, row).textContent = piece;
      });
      write(node("div", { class: "attn-row-label" }, labels), ["c", "t"], " = Σ");
      for (const label of labels.children) label.style.height = label.style.lineHeight = `${this.size.row}px`;
      this.rows = node("canvas", { class: "attn-rows-canvas", width: D, height: S + 1, role: "img",
                                   "aria-label": `${S} rows α·h of ${D} numbers, then c_t` }, rows);
      this.rows.style.height = `${(S + 1) * this.size.row}px`;
      this.hover(this.rows, (row, d, v) => `${row < S ? `α·h${row + 1} ${this.source[row]}` : "c_t"} · dim ${d} = ${v.toFixed(3)}`);
    }

    panelTitle(parent) {
      return node("div", { class: "attn-panel-title" }, parent);
    }

    // A bar per source piece over a shared axis; the pieces are written vertically under it. The bars are drawn as two
    // shapes (the highlighted bar, and the others), redrawn at a step as two attributes rather than three a bar;
    // over each piece's column lies a clear box that names its number (data-value, its tooltip) and takes a tap.
    bars(parent, plot, symbol) {
      const { font, bars: height, gutter } = this.size;
      const room = symbol === "α" ? textWidth("0.00", font - 2) : 4;  // α's values are written above its bars
      const labels = textWidth(this.source.reduce((a, b) => (b.length > a.length ? b : a), ""), font);
      const svg = svgNode("svg", { width: gutter + plot, height: room + height + labels + 6, class: "attn-bars" }, parent);
      this.tap(svg);
      const panel = { svg, symbol, top: room, height, ticks: svgNode("g", {}, svg), bars: [], values: [] };
      panel.zero = svgNode("line", { x1: gutter, x2: gutter + plot, stroke: "#888" }, svg);
      panel.shapes = svgNode("path", { class: "attn-bar-shapes", fill: MUTED }, svg);
      panel.best = svgNode("path", { class: "attn-bar-shapes attn-bar-best", fill: HIGHLIGHT }, svg);
      const texts = upwards(svg);
      this.source.forEach((piece, j) => {
        const x = gutter + (j + 0.5) * this.slot;
        placeUpwards(svgNode("text", { class: "attn-tick", "text-anchor": "end", "dominant-baseline": "central" }, texts),
                     x, room + height + 6).textContent = piece;
        if (symbol === "α") {
          const value = svgNode("text", { class: "attn-value", "text-anchor": "start", "dominant-baseline": "central", x: 0, y: x },
                                texts);
          value.style.fontSize = `${font - 2}px`;
          panel.values.push(value);
        }
        const bar = svgNode("rect", { x: x - 0.5 * this.slot, y: 0, width: this.slot, height: room + height, fill: "transparent",
                                      class: "attn-bar" }, svg);
        bar.tip = svgNode("title", {}, bar);
        panel.bars.push(bar);
      });
      return panel;
    }

    // Panel 5: the annotations as points sized by α, c_t as a star at their α-weighted centroid.
    scatter(parent, width) {
      const height = this.size.pca, pad = 40;
      const svg = svgNode("svg", { width, height, class: "attn-pca" }, parent);
      this.tap(svg);
      // c_t lies inside the points' hull (α ≥ 0, Σα = 1); the fixed c of a model without attention
      // need not, so the extent holds the stars too
      const xs = [...this.points, ...this.centres].map((p) => p[0]), ys = [...this.points, ...this.centres].map((p) => p[1]);
      const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
      const sx = (x) => pad + ((x - x0) / ((x1 - x0) || 1)) * (width - 2 * pad);
      const sy = (y) => height - pad - ((y - y0) / ((y1 - y0) || 1)) * (height - 2 * pad);
      this.place = (p) => [sx(p[0]), sy(p[1])];
      this.dots = this.points.map((p, j) => {
        const [x, y] = this.place(p);
        const dot = svgNode("circle", { cx: x, cy: y, "fill-opacity": 0.8 }, svg);
        dot.tip = svgNode("title", {}, dot);
        dot.label = svgNode("text", { x, y: y - 8, "text-anchor": "middle", class: "attn-point-label" }, svg);
        dot.label.textContent = this.source[j];
        return dot;
      });
      // measured once (one layout), so that labels written side by side never overlap
      this.dots.forEach((dot) => {
        const box = dot.label.getBBox();
        dot.box = box.width ? [box.x - 2, box.y - 2, box.x + box.width + 2, box.y + box.height + 2]
          : this.labelBox(Number(dot.label.getAttribute("x")), Number(dot.label.getAttribute("y")), dot.label.textContent);
      });
      const arms = Array.from({ length: 10 }, (_, k) => {
        const r = k % 2 ? 5 : 12, a = (Math.PI * k) / 5 - Math.PI / 2;
        return `${(r * Math.cos(a)).toFixed(2)},${(r * Math.sin(a)).toFixed(2)}`;
      });
      this.star = svgNode("polygon", { points: arms.join(" "), fill: HIGHLIGHT, stroke: "black", class: "attn-star" }, svg);
      svgNode("title", {}, this.star).textContent = this.attends ? "c_t = Σ_j α_tj h_j" : "c = [→h_S; ←h_1], the same at every step";
      this.starLabel = svgNode("text", { "text-anchor": "middle", class: "attn-point-label" }, svg);
    }

    // Where a label centred on x, with its baseline at y, is drawn, generously: [left, top, right, bottom].
    labelBox(x, y, text) {
      const font = 0.85 * this.size.font, half = (0.8 * font * text.length) / 2 + 2;
      return [x - half, y - 1.2 * font, x + half, y + 0.5 * font];
    }

    // Label the points most attended first, and leave out a label that would overlap one already
    // written (the dot's tooltip still names it): on a phone, 40 points share a small square.
    labelPoints(weights, star) {
      const placed = [star];
      const overlaps = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
      [...weights.keys()].sort((a, b) => weights[b] - weights[a]).forEach((j) => {
        const free = !placed.some((box) => overlaps(box, this.dots[j].box));
        this.dots[j].label.style.display = free ? "" : "none";
        if (free) placed.push(this.dots[j].box);
      });
    }

    // Hover (and tap) over a canvas of rows: which number is under the pointer.
    hover(canvas, describe) {
      const show = (event) => {
        const box = canvas.getBoundingClientRect(), rows = canvas.attnValues;
        if (!rows) return;
        const r = Math.min(rows.length - 1, Math.floor(((event.clientY - box.top) / box.height) * rows.length));
        const d = Math.min(rows[0].length - 1, Math.floor(((event.clientX - box.left) / box.width) * rows[0].length));
        this.showTooltip(event, describe(r, d, rows[r][d]));
      };
      canvas.addEventListener("pointermove", show);
      canvas.addEventListener("pointerdown", show);  // a tap, on a phone
      canvas.addEventListener("pointerleave", () => { this.tooltip.style.display = "none"; });
    }

    // A tap on a bar, a point or the star names its number, as hovering does with a mouse (an SVG
    // <title> shows only to a mouse); a tap elsewhere hides it.
    tap(svg) {
      svg.addEventListener("pointerdown", (event) => {
        if (event.pointerType === "mouse") return;
        const tip = event.target.querySelector("title");
        if (tip) this.showTooltip(event, tip.textContent);
        else this.tooltip.style.display = "none";
      });
    }

    showTooltip(event, text) {
      const host = this.root.getBoundingClientRect();
      this.tooltip.textContent = text;
      this.tooltip.style.display = "block";
      const left = Math.min(event.clientX - host.left + 12, host.width - this.tooltip.offsetWidth - 4);  // kept on screen
      this.tooltip.style.left = `${Math.max(0, left)}px`;
      this.tooltip.style.top = `${event.clientY - host.top + 12}px`;
    }

    // Output step t (1-based); a model that stopped earlier shows its last step and says so.
    show(t) {
      const T = this.target.length, i = Math.min(t, T) - 1;
      if (this.attends) this.showAttention(i, T, t);
      else this.showFixed(i, T, t);
      if (this.attribution) {
        const scores = this.attribution[i];
        this.drawBars(this.attributionBars, this.attribution, i, scores.indexOf(Math.max(...scores)));
      }
      const [x, y] = this.place(this.centres[i]);
      this.star.setAttribute("transform", `translate(${x},${y})`);
      this.star.dataset.x = this.centres[i][0];
      this.star.dataset.y = this.centres[i][1];
      this.starLabel.setAttribute("x", x);
      this.starLabel.setAttribute("y", y + 26);
      const c = this.attends ? ["c", String(i + 1)] : "c";
      write(this.starLabel, c, ` → ${this.target[i]}`);
      const weights = this.attends ? this.weights[i] : this.points.map(() => 0);
      this.labelPoints(weights, this.labelBox(x, y + 26, `c${this.attends ? i + 1 : ""} → ${this.target[i]}`));
    }

    showAttention(i, T, t) {
      const weights = this.weights[i];
      let best = 0;
      weights.forEach((w, j) => { if (w > weights[best]) best = j; });
      const S = this.source.length, forced = (this.model.forced || []).includes(i + 1);
      write(this.title, `${this.model.title}: how `, ["c", String(i + 1)], " is formed");
      const resting = best === S - 1 && this.model.eos_note;  // the most-attended piece is </s>
      this.writeCaption(i, T, t, ["; most attention on ", this.source[best], ` (α = ${weights[best].toFixed(2)})` +
                                  (resting ? `: ${this.model.eos_note}` : "") + (forced ? "; α set by hand at this step" : "")]);
      if (forced) write(this.weightTitle, "3. weights ", ["α", "tj"], ` set by hand (what if?), not softmax(`, ["e", "t·"],
                        `): (B, 1, S) = (1, 1, ${S})`);
      else write(this.weightTitle, "3. weights ", ["α", "tj"], " = softmax(", ["e", "t·"], `): (B, 1, S) = (1, 1, ${S})`);

      paint(this.strip, [this.queries[i]], this.table);
      this.drawBars(this.scoreBars, this.scores, i, -1);
      this.drawBars(this.weightBars, this.weights, i, best);
      this.drawBars(this.coverageBars, this.coverage, i, -1);
      this.weighted ??= this.annotations.map((h) => new Float32Array(h.length));
      paint(this.rows, [...weigh(this.annotations, weights, this.weighted), this.contexts[i]], this.table);

      this.dots.forEach((dot, j) => {
        dot.setAttribute("r", (10 + 40 * weights[j]) / 2);
        dot.setAttribute("fill", j === best ? HIGHLIGHT : MUTED);
        dot.dataset.weight = weights[j];
        setText(dot.tip, `h${j + 1} of ${this.source[j]}: α = ${weights[j].toFixed(3)}`);
      });
    }

    // No attention: the same c at every step, and no α to size or colour the points by.
    showFixed(i, T, t) {
      write(this.title, `${this.model.title}: step ${i + 1} reads the fixed c`);
      this.writeCaption(i, T, t, ["; no attention: the same c as at every other step"]);
      paint(this.strip, [this.contexts[i]], this.table);
      this.dots.forEach((dot, j) => {
        dot.setAttribute("r", 5);
        dot.setAttribute("fill", MUTED);
        setText(dot.tip, `h${j + 1} of ${this.source[j]} (no α: this model never weighs the h_j)`);
      });
    }

    // "Step i+1 of T — emitted y" and the rest: strings, with the odd ones (pieces) set as code.
    writeCaption(i, T, t, rest) {
      fill(this.caption, [["strong", `Step ${i + 1} of ${T}`], [null, " — emitted "], ["code", this.target[i]],
                          ...rest.map((part, k) => [k % 2 ? "code" : null, part]),
                          ...(t > T ? [[null, `. This model stopped after ${T} steps.`]] : [])]);
    }

    // Bars for step i's values, rows[i], on one axis for every step (α's: always [0, 1]), holding 0 and the values of
    // all of them: a bar's height compares across steps, and the axis is drawn once per translation, not per step.
    drawBars(panel, rows, i, best) {
      const { gutter } = this.size, values = rows[i], [lo, hi] = panel.symbol === "α" ? [0, 1] : this.extent(panel, rows);
      const y = (v) => panel.top + ((hi - v) / ((hi - lo) || 1)) * panel.height;
      if (panel.range !== `${lo} ${hi}`) {  // a new translation, pick or attribution
        panel.range = `${lo} ${hi}`;
        panel.ticks.textContent = "";
        for (const tick of niceTicks(lo, hi)) {
          const label = svgNode("text", { x: gutter - 6, y: y(tick), "text-anchor": "end", "dominant-baseline": "central",
                                          class: "attn-tick" }, panel.ticks);
          label.textContent = String(tick);
        }
        panel.zero.setAttribute("y1", y(0));
        panel.zero.setAttribute("y2", y(0));
      }
      let shapes = "", highlighted = "";
      values.forEach((v, j) => {
        const x = gutter + (j + 0.5) * this.slot, width = 0.8 * this.slot;
        const shape = `M${x - width / 2},${Math.min(y(v), y(0))}h${width}v${Math.abs(y(v) - y(0))}h${-width}z`;
        if (j === best) highlighted = shape;
        else shapes += shape;
        panel.bars[j].dataset.value = v;
        setText(panel.bars[j].tip, `${panel.symbol} = ${v.toFixed(3)} for ${this.source[j]}`);
        if (panel.values.length) {  // α's value, written upwards from the top of its bar
          panel.values[j].setAttribute("x", 3 - y(v));  // upwards (placeUpwards): the figure's y is the text's −x
          setText(panel.values[j], v.toFixed(2));
        }
      });
      panel.shapes.setAttribute("d", shapes);
      panel.best.setAttribute("d", highlighted);
    }

    // 0 and the smallest and largest of every step's values (coverage's: from 0 to 1 or more, a piece attended more
    // than once in all), computed once for a panel's rows.
    extent(panel, rows) {
      if (panel.extentOf !== rows) {
        let lo = 0, hi = panel.symbol === "C" ? 1 : 0;
        for (const row of rows) for (let j = 0; j < row.length; j++) { lo = Math.min(lo, row[j]); hi = Math.max(hi, row[j]); }
        panel.extentOf = rows;
        panel.extent = [lo, hi];
      }
      return panel.extent;
    }
  }

  // The step views of one page element: its scrubber (a slider of class attn-step-slider, buttons
  // attn-next-step and attn-play) and its slots (class attn-step-slot), filled in order.
  class StepGroup {
    constructor(root) {
      this.root = root;
      this.payload = null;
      this.views = [];
      this.t = 1;
      this.large = false;
      this.timer = null;
      this.drawnFor = null;
    }

    find(selector) {
      return this.root.querySelector(selector);
    }

    // A new translation: build every view's panels and show step 1.
    load(payload, large) {
      this.stopPlaying();
      this.payload = payload;
      this.large = Boolean(large);
      this.build();
      this.show(1);
      this.follow(this.find(".attn-step-slider input[type=range]"));
    }

    // The slider's own input event draws the step at once: Gradio's event for it (show_step) runs
    // 5–25 ms later, often a frame late, and then finds the step already drawn.
    follow(slider) {
      if (!slider || slider.attnFollowed) return;
      slider.addEventListener("input", () => this.show(slider.value));
      slider.attnFollowed = true;
    }

    build() {
      for (const view of this.views) view.root.remove();  // a refused input leaves no old steps
      this.views = [];
      if (!this.payload) return;
      const table = colourTable(this.payload.colorscale);
      const slots = [...this.root.querySelectorAll(".attn-step-slot")];
      const networks = [...this.root.querySelectorAll(".attn-network-slot")];
      const { HeadStepView, HeadsView, SelfAttentionView, readPick } = window.attnSteps;
      const picks = [...this.root.querySelectorAll(".attn-pick-slot textarea, .attn-pick-slot input")];
      const kinds = [[".attn-heads-slot", HeadsView], [".attn-self-slot", SelfAttentionView]];
      this.picks = this.payload.views.map((model, k) => readPick(model, picks[k] ? picks[k].value : ""));
      this.payload.views.forEach((model, k) => {
        const add = (view, container) => {
          view.k = k;
          view.pick = this.picks[k];
          this.views.push(view);
          this.watch(container);
        };
        if (slots[k]) add(new (model.heads ? HeadStepView : StepView)(slots[k], model, table, this.large), slots[k]);
        if (networks[k]) add(new window.attnSteps.NetworkView(networks[k], model, this.large), networks[k]);
        for (const [selector, View] of kinds) {
          const container = this.root.querySelectorAll(selector)[k];
          if (container) add(new View(container, model, this.payload, this.large, (pick) => this.pickGrid(k, pick)), container);
        }
      });
    }

    // A Transformer's grid picked on view k (one of its payload's heads.grids): every view of that model, the side's
    // alignment grid, note and coverage row redraw (drawPick), and the page's pick slot takes its key for the server
    // (ui.step_group.pick_slot), which draws a grid by word and reads the pick for links, exports and the check.
    pickGrid(k, pick) {
      this.picks[k] = pick;
      for (const view of this.views) {
        if (view.k !== k) continue;
        view.pick = pick;
        if (view.repick) view.repick();
        view.show(this.t);
      }
      const box = [...this.root.querySelectorAll(".attn-pick-slot textarea, .attn-pick-slot input")][k];
      if (box) {
        window.attnSteps.drawPick(box, this.payload.views[k], pick);
        box.value = pick.key;
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }
    }

    // Attributions asked for on the page, one per view ({label, source, target, scores} or null): drawn
    // under the α bars until the next translation. One computed for other pieces (the user has
    // translated again since it was asked for) is never drawn.
    attribute(attributions) {
      if (!this.payload) return;
      const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
      this.payload.views.forEach((view, k) => {
        const a = attributions[k];
        view.attribution = a && same(a.source, view.source) && same(a.target, view.target) ? a : null;
      });
      this.relayout();
    }

    // Relaid out when the page's width or the text size changes.
    relayout(large) {
      if (large !== undefined) this.large = Boolean(large);
      this.build();
      this.drawnFor = null;  // new panels: draw the step again
      this.show(this.t);
    }

    watch(container) {
      if (watched.has(container)) return;
      let width = container.clientWidth;
      new ResizeObserver(() => {
        if (Math.abs(container.clientWidth - width) < 2) return;
        width = container.clientWidth;
        requestAnimationFrame(() => this.relayout());
      }).observe(container);
      watched.add(container);
    }

    // Every view at output step t (1-based).
    show(t) {
      if (Number(t) === this.t && this.drawnFor === this.payload) return;
      this.t = Number(t) || 1;
      this.drawnFor = this.payload;
      for (const view of this.views) {
        if (!view.root.isConnected) return this.relayout();  // the page re-rendered the container
        view.show(this.t);
      }
    }

    // One step back or forward, kept within the translation; returns the new step for the slider.
    move(t, delta) {
      if (!this.payload) return 1;
      const next = Math.max(1, Math.min(this.payload.steps, Number(t) + delta));
      this.show(next);
      return next;
    }

    // Play, for a projector: one step a second through "Next step" until the last step; a second
    // press stops. Starts again from step 1 when pressed at the last step. Returns the step shown.
    play(t) {
      if (this.timer !== null || !this.payload) {
        this.stopPlaying();
        return this.move(t, 0);
      }
      const start = Number(t) >= this.payload.steps ? 1 : Number(t);
      this.find(".attn-play").textContent = "⏸ Stop";
      this.timer = setInterval(() => {
        const slider = this.find(".attn-step-slider input[type=range]");
        if (Number(slider.value) >= Number(slider.max)) this.stopPlaying();
        else this.find(".attn-next-step").click();
      }, PLAY_INTERVAL_MS);
      return this.move(start, 0);
    }

    stopPlaying() {
      clearInterval(this.timer);
      this.timer = null;
      const button = this.find(".attn-play");
      if (button) button.textContent = "▶ Play";
    }
  }

  const watched = new WeakSet();  // containers whose width is watched already
  const groups = new Map();  // element id → its StepGroup
  window.attnSteps = {
    colourTable,  // shared with learn.js: one reading of a Plotly colour scale
    // The step views bound to the element with this id, made on first use (and again if Gradio
    // re-rendered the element).
    group(id) {
      const root = document.getElementById(id);
      if (!groups.has(id) || groups.get(id).root !== root) groups.set(id, new StepGroup(root));
      return groups.get(id);
    },
    // The page's text size switched (the projector): every group made so far, relaid out at that size.
    relayoutAll(large) {
      for (const id of groups.keys()) if (document.getElementById(id)) this.group(id).relayout(large);
    },
    // what network_view.js and heads_view.js draw with (they set window.attnSteps.NetworkView, HeadStepView, …)
    draw: { floats, node, svgNode, write, setText, upwards, placeUpwards, textWidth, colourTable, alphaIndex, tableColour,
            running, paint, weigh, SIZES, HIGHLIGHT, MUTED, StepView },
  };
}
