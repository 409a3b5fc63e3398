() => {
  // A Transformer's heads, drawn in the browser from the step payload (attn_demo.views.steps.heads_payload) by the
  // step group of step_views.js, with that file's helpers. For a model with heads:
  //   HeadsView          the Layer and Head controls and the cross-attention of every layer and head at once
  //                      (small multiples on the grids' colours), each a button that picks it;
  //   SelfAttentionView  the encoder's and the decoder's self-attention of the picked layer and head;
  //   HeadStepView       the step view of the picked head: q_t, the k_j, e_tj = q_t·k_j/√d_k, α_tj, the rows
  //                      α_tj·v_j and o_t, then the heads concatenated and W_O;
  // network_view.js draws a decoder layer with the pick's numbers, read by headsOf, crossOf and meanOf.
  // A model without heads gets the payload's sentence saying what it lacks. The pick is one of the payload's grids
  // ({key, layer, head, name, title, text}, layer and head from 0, head null: the mean of the layer's heads) and is
  // the step group's (pickGrid): a pick here redraws every view of that model and the side's grid. Every number
  // drawn is one the model computed; a mean of heads is computed here in float32, as the server's numpy computes
  // the shown grid.
  // Pieces are user text: they are written as text (textContent, a text node's data), never as markup.
  const { floats, node, svgNode, write, setText, upwards, placeUpwards, textWidth, colourTable, alphaIndex, tableColour,
          running, paint, weigh, SIZES, HIGHLIGHT, StepView } = window.attnSteps.draw;

  const CELL = 64;  // a small multiple's width in CSS pixels at normal text (the phone's 390 px hold 4 heads and a mean)

  // A typed array of any rank as nested arrays, its last axis Float32Array rows: (L, H, T, S) → [L][H][T] rows of S.
  function tensor(typed) {
    const shape = typed.shape.split(",").map(Number);
    const flat = floats({ ...typed, shape: String(shape.reduce((a, b) => a * b, 1)) });
    const split = (offset, axes) => {
      if (axes.length === 1) return flat.subarray(offset, offset + axes[0]);
      const size = axes.slice(1).reduce((a, b) => a * b, 1);
      return Array.from({ length: axes[0] }, (_, i) => split(offset + i * size, axes.slice(1)));
    };
    return split(0, shape);
  }

  // The mean of a layer's heads, [H] grids of rows → one grid, in float32.
  function meanOf(grids) {
    return grids[0].map((row, t) => row.map((_, j) => Math.fround(grids.reduce((sum, g) => sum + g[t][j], 0) / grids.length)));
  }

  // The grid a pick slot's key names for this model (the server wrote the keys), or the one its config shows.
  function readPick(model, key) {
    if (!model.heads) return null;
    const grids = model.heads.grids;
    return grids.find((grid) => grid.key === key) || grids.find((grid) => grid.key === model.heads.shown);
  }

  // The grid of a layer and head (from 0; head null: the mean of the layer's heads).
  const gridOf = (model, layer, head) => model.heads.grids.find((grid) => grid.layer === layer && grid.head === head);

  // Every number of a model's heads, read once per model payload and kept on it.
  function headsOf(model) {
    if (!model.heads.read) {
      const h = model.heads;
      h.read = { cross: tensor(h.cross), scores: tensor(h.scores), queries: tensor(h.queries), keys: tensor(h.keys),
                 values: tensor(h.values), outputs: tensor(h.outputs), attended: tensor(h.attended),
                 encoder: tensor(h.encoder), decoder: tensor(h.decoder) };
      const [L, H, , , ] = h.cross.shape.split(",").map(Number);
      h.read.L = L;
      h.read.H = H;
      h.read.dk = Number(h.queries.shape.split(",")[3]);
      h.read.activation = h.activation;  // "max(0, " or "GELU(": how φ( of the feed-forward is written
      h.read.means = h.read.cross.map(meanOf);  // each layer's mean over its heads (T, S)
    }
    return model.heads.read;
  }

  // The cross-attention α (T rows of S) a pick names.
  function crossOf(read, pick) {
    return pick.head === null ? read.means[pick.layer] : read.cross[pick.layer][pick.head];
  }

  // A head's statistics on this sentence (Voita et al. 2019): its confidence, the mean over steps of the largest
  // α, and its share of α on </s>, the mean over steps of the last piece's α.
  function statistics(rows) {
    const confidence = rows.reduce((sum, row) => sum + Math.max(...row), 0) / rows.length;
    const eos = rows.reduce((sum, row) => sum + row[row.length - 1], 0) / rows.length;
    return { confidence, eos };
  }

  // A model without heads: the payload's one sentence on what it lacks.
  function lacks(container, text) {
    container.textContent = "";
    const root = node("p", { class: "attn-heads-lacks" }, container);
    root.textContent = text;
    return root;
  }

  class HeadsView {
    // The Layer and Head controls and every layer's and head's cross-attention, in `container`.
    constructor(container, model, payload, large, onPick) {
      this.model = model;
      this.onPick = onPick;
      if (!model.heads) {
        this.root = lacks(container, model.no_heads);
        return;
      }
      this.read = headsOf(model);
      const { L, H } = this.read, id = container.id || "heads";
      container.textContent = "";
      this.root = node("div", { class: "attn-heads" }, container);
      this.root.style.fontSize = `${(large ? SIZES.large : SIZES.normal).font}px`;
      const controls = node("div", { class: "attn-heads-controls" }, this.root);
      this.layer = this.select(controls, `${id}-layer`, "Layer", Array.from({ length: L }, (_, l) => [l, String(l + 1)]));
      this.head = this.select(controls, `${id}-head`, "Head",
                              [["mean", "mean of heads"], ...Array.from({ length: H }, (_, h) => [h, String(h + 1)])]);
      const pick = () => this.onPick(gridOf(model, Number(this.layer.value), this.head.value === "mean" ? null : Number(this.head.value)));
      this.layer.addEventListener("change", pick);
      this.head.addEventListener("change", pick);
      node("p", { class: "attn-heads-caption" }, this.root).textContent = "Every layer's and head's cross-attention for "
        + "this sentence (French down, English across, on the grid's colours). Tap one to show it in the grid above, its "
        + "self-attention and the step view.";
      const grid = node("div", { class: "attn-heads-grid", role: "group", "aria-label": "Cross-attention of every layer and head" }, this.root);
      grid.style.gridTemplateColumns = `auto repeat(${H + 1}, minmax(0, ${large ? 1.5 * CELL : CELL}px))`;
      node("span", {}, grid);
      ["mean", ...Array.from({ length: H }, (_, h) => `head ${h + 1}`)].forEach((name) => {
        node("span", { class: "attn-heads-column" }, grid).textContent = name;
      });
      const table = colourTable(payload.grid_colorscale), off = new Set(model.heads.off.map((p) => p.join(".")));
      this.cells = [];
      for (const cellPick of model.heads.grids) {  // layer by layer, its mean then its heads
        if (cellPick.head === null) node("span", { class: "attn-heads-row" }, grid).textContent = `layer ${cellPick.layer + 1}`;
        const rows = crossOf(this.read, cellPick), { confidence, eos } = statistics(rows);
        const turnedOff = cellPick.head !== null && off.has(`${cellPick.layer}.${cellPick.head}`);
        const label = `${cellPick.name}: confidence ${confidence.toFixed(2)}, α on </s> ${eos.toFixed(2)}`
          + (turnedOff ? ", turned off" : "");
        const button = node("button", { type: "button", class: "attn-head-cell", "aria-label": label, title: label,
                                        "aria-pressed": "false" }, grid);
        if (turnedOff) button.classList.add("attn-head-off");
        // shown as an image of the canvas it is painted on: each canvas on the page is a layer of its own, which every
        // frame lays out again (a page of heads made each step change ~3 ms slower)
        const canvas = node("canvas", { width: rows[0].length, height: rows.length });
        paint(canvas, rows, table, true);
        node("img", { src: canvas.toDataURL(), alt: "" }, button).attnValues = canvas.attnValues;
        button.addEventListener("click", () => this.onPick(cellPick));
        this.cells.push({ button, pick: cellPick });
      }
    }

    // A labelled <select>: its accessible name is `name` exactly.
    select(parent, id, name, options) {
      const wrap = node("span", { class: "attn-heads-select" }, parent);
      node("label", { for: id }, wrap).textContent = name;
      const select = node("select", { id }, wrap);
      for (const [value, text] of options) node("option", { value: String(value) }, select).textContent = text;
      return select;
    }

    show() {  // for a pick, as the self-attention view
      if (!this.model.heads || this.drawnFor === this.pick) return;
      this.drawnFor = this.pick;
      this.layer.value = String(this.pick.layer);
      this.head.value = this.pick.head === null ? "mean" : String(this.pick.head);
      for (const { button, pick } of this.cells) {
        button.setAttribute("aria-pressed", String(pick.key === this.pick.key));
      }
    }
  }

  class SelfAttentionView {
    // The encoder's and the decoder's self-attention of the picked layer and head, in `container`.
    constructor(container, model, payload, large) {
      this.model = model;
      if (!model.heads) {
        this.root = lacks(container, model.no_self_attention);
        return;
      }
      this.read = headsOf(model);
      this.size = large ? SIZES.large : SIZES.normal;
      this.table = colourTable(payload.grid_colorscale);
      container.textContent = "";
      this.root = node("div", { class: "attn-self" }, container);
      this.root.style.fontSize = `${this.size.font}px`;
      this.title = node("div", { class: "attn-step-title" }, this.root);
      node("p", { class: "attn-heads-caption" }, this.root).textContent = "Self-attention: each position reads the "
        + "others of its own side. In the encoder every English piece reads the whole sentence (row i: what h_i read). "
        + "In the decoder the step that writes y_t reads only what is already written, <s> and y_1 … y_t−1: the rest is "
        + "masked, so its grid is a triangle.";
      this.encoder = this.grid("encoder", this.model.source, this.model.source);
      this.decoder = this.grid("decoder", this.model.target, ["<s>", ...this.model.target.slice(0, -1)]);
    }

    // One labelled grid: rows read columns.
    grid(name, rows, columns) {
      const box = node("figure", { class: "attn-self-grid" }, this.root);
      const caption = node("figcaption", {}, box);
      const scroll = node("div", { class: "attn-scroll" }, box);
      const { font, column } = this.size, gutter = textWidth(rows.reduce((a, b) => (b.length > a.length ? b : a), ""), font);
      const top = textWidth(columns.reduce((a, b) => (b.length > a.length ? b : a), ""), font);
      const svg = svgNode("svg", { width: gutter + columns.length * column + 4, height: top + rows.length * column + 4,
                                   role: "img", class: "attn-self-svg" }, scroll);
      const texts = upwards(svg);
      columns.forEach((piece, j) => {
        placeUpwards(svgNode("text", { class: "attn-tick", "text-anchor": "start", "dominant-baseline": "central" }, texts),
                     gutter + (j + 0.5) * column, top - 4).textContent = piece;
      });
      const cells = rows.map((piece, i) => {
        const label = svgNode("text", { x: gutter - 4, y: top + (i + 0.5) * column, class: "attn-tick", "text-anchor": "end",
                                        "dominant-baseline": "central" }, svg);
        label.textContent = piece;
        return columns.map((_, j) => {
          const cell = svgNode("rect", { x: gutter + j * column, y: top + i * column, width: column - 1, height: column - 1 }, svg);
          cell.tip = svgNode("title", {}, cell);
          return cell;
        });
      });
      return { caption, svg, cells, rows, columns, name };
    }

    // Drawn for a pick, not for a step: no step changes what a layer's head read, so a step change leaves it be.
    show() {
      if (!this.model.heads || this.drawnFor === this.pick) return;
      this.drawnFor = this.pick;
      const { layer, head } = this.pick, read = this.read, encoderLayer = Math.min(layer, read.encoder.length - 1);
      const pickOf = (grids) => (head === null ? meanOf(grids) : grids[head]);
      write(this.title, `${this.model.title}: self-attention, ${this.pick.name}`);
      const encoderNote = encoderLayer === layer ? "" : ` (the encoder has ${read.encoder.length}: its last)`;
      this.draw(this.encoder, pickOf(read.encoder[encoderLayer]), `Encoder layer ${encoderLayer + 1}${encoderNote}: `
                + `(S, S) = (${this.model.source.length}, ${this.model.source.length})`);
      this.draw(this.decoder, pickOf(read.decoder[layer]), `Decoder layer ${layer + 1}, masked: (T, T) = `
                + `(${this.model.target.length}, ${this.model.target.length})`);
    }

    draw(grid, alpha, caption) {
      grid.caption.textContent = caption;
      grid.svg.setAttribute("aria-label", `${caption}. ${grid.rows.length} rows, each summing to 1.`);
      grid.svg.attnValues = alpha;  // what was drawn, for tests
      alpha.forEach((row, i) => row.forEach((v, j) => {
        grid.cells[i][j].setAttribute("fill", tableColour(this.table, alphaIndex(v)));
        grid.cells[i][j].tip.textContent = `${grid.rows[i]} reads ${grid.columns[j]}: α = ${v.toFixed(3)}`;
      }));
    }
  }

  class HeadStepView extends StepView {
    // The step view of the picked head: what it computes at step t, in the order it computes it.
    panels(root, width) {
      this.read = headsOf(this.model);
      const S = this.source.length, { H, dk } = this.read, D = this.contexts[0].length;
      this.heading = node("div", { class: "attn-heads-caption" }, root);
      this.headPanels = node("div", {}, root);
      write(this.panelTitle(this.headPanels), "1. query ", ["q", "t"], " = ", ["W", "Q"], " ", ["x", "t"],
            ` of this head: (B, H, 1, d_k) → (1, 1, ${dk})`);
      this.strip = node("canvas", { class: "attn-strip", width: dk, height: 1, role: "img",
                                    "aria-label": `the query: ${dk} numbers, red below 0, blue above` }, this.headPanels);
      this.strip.style.height = `${this.size.strip}px`;
      this.hover(this.strip, (row, d, v) => `q_t · dim ${d} = ${v.toFixed(3)}`);
      this.keyRows = this.rowsCanvas(this.headPanels, ["2. keys ", ["k", "j"], " = ", ["W", "K"], " ", ["h", "j"],
                                                       `: (B, H, S, d_k) → (${S}, ${dk})`], (j) => [["k", j]], false);
      const scroll = this.scrolling(root, width, S);
      this.scoreTitle = this.panelTitle(scroll);
      write(this.scoreTitle, "3. scores ", ["e", "tj"], " = ", ["q", "t"], " · ", ["k", "j"], ` / √d_k, √${dk} = `
            + `${Math.sqrt(dk).toFixed(2)}: without it the dot products of ${dk} numbers would grow with d_k and the softmax `
            + `would put all its weight on one piece: (B, H, 1, S) → (1, 1, ${S})`);
      this.scoreBars = this.bars(scroll, this.plot, "e");
      this.weightTitle = this.panelTitle(scroll);
      this.weightBars = this.bars(scroll, this.plot, "α");
      write(this.panelTitle(scroll), "coverage ", ["C", "j"], " = Σ ", ["α", "t′j"], " up to this step (1 ≈ attended once; "
            + "no score reads it)");
      this.coverageBars = this.bars(scroll, this.plot, "C");
      this.attributionPanel(scroll, this.model.attribution);
      this.valueRows = this.rowsCanvas(root, ["5. ", ["α", "tj"], "·", ["v", "j"], ", ", ["v", "j"], " = ", ["W", "V"], " ",
                                              ["h", "j"], `: (S, d_k) = (${S}, ${dk}), and their sum `, ["o", "t"],
                                              `: (1, d_k) = (1, ${dk})`], (j) => ["α·", ["v", j]], true);
      write(this.panelTitle(root), "6. the ", String(H), " heads' ", ["o", "t"], " concatenated: (B, 1, H·d_k) = ",
            `(1, 1, ${H * dk}); then `, ["W", "O"], `[…] + `, ["b", "O"], `: (1, 1, D) = (1, 1, ${D})`);
      this.concatenated = this.stripCanvas(root, H * dk, "[o_t^1; …; o_t^H]");
      this.multiHead = this.stripCanvas(root, D, "W_O [o_t^1; …; o_t^H] + b_O");
      this.residual = node("p", { class: "attn-heads-caption" }, root);
    }

    // A canvas of rows with a label each (symbol(j) for the j-th piece, then the piece), then, with a sum, o_t.
    rowsCanvas(parent, title, symbol, withSum) {
      write(this.panelTitle(parent), ...title);
      const S = this.source.length, width = this.read.dk, name = (j) => symbol(String(j)).flat().join("");
      const rows = node("div", { class: "attn-rows" }, parent);
      const labels = node("div", { class: "attn-row-labels" }, rows);
      this.source.forEach((piece, j) => {
        const row = write(node("div", { class: "attn-row-label" }, labels), ...symbol(String(j + 1)), " ");
        node("span", {}, row).textContent = piece;
      });
      if (withSum) write(node("div", { class: "attn-row-label" }, labels), ["o", "t"], " = Σ");
      for (const label of labels.children) label.style.height = label.style.lineHeight = `${this.size.row}px`;
      const count = S + (withSum ? 1 : 0);
      const canvas = node("canvas", { class: "attn-rows-canvas", width, height: count, role: "img",
                                      "aria-label": `${S} rows ${name("j")} of ${width} numbers${withSum ? ", then o_t" : ""}` }, rows);
      canvas.style.height = `${count * this.size.row}px`;
      this.hover(canvas, (row, d, v) => `${row < S ? `${name(row + 1)} ${this.source[row]}` : "o_t"} · dim ${d} = ${v.toFixed(3)}`);
      return canvas;
    }

    stripCanvas(parent, width, name) {
      const canvas = node("canvas", { class: "attn-strip", width, height: 1, role: "img",
                                      "aria-label": `${name}: ${width} numbers, red below 0, blue above` }, parent);
      canvas.style.height = `${this.size.strip}px`;
      canvas.style.marginBottom = "4px";
      this.hover(canvas, (row, d, v) => `${name} · dim ${d} = ${v.toFixed(3)}`);
      return canvas;
    }

    repick() {
      this.coverage = null;  // the running sums of the new pick's α, made at its first step
    }

    show(t) {
      const T = this.target.length, i = Math.min(t, T) - 1, read = this.read, { layer, head } = this.pick;
      const weights = crossOf(read, this.pick);
      if (!this.coverage) this.coverage = running(weights);
      const alpha = weights[i], S = this.source.length;
      let best = 0;
      alpha.forEach((w, j) => { if (w > alpha[best]) best = j; });
      write(this.title, `${this.model.title}: how ${this.pick.name} reads the `, ["h", "j"], " at step ", String(i + 1));
      const resting = best === S - 1 && this.model.eos_note;
      this.writeCaption(i, T, t, ["; most attention on ", this.source[best], ` (α = ${alpha[best].toFixed(2)})`
                                  + (resting ? `: ${this.model.eos_note}` : "")]);
      this.headPanels.style.display = head === null ? "none" : "";
      this.scoreTitle.style.display = this.scoreBars.svg.style.display = head === null ? "none" : "";
      this.valueRows.parentElement.style.display = this.valueRows.parentElement.previousElementSibling.style.display =
        head === null ? "none" : "";
      setText(this.heading, head === null
        ? `The mean of layer ${layer + 1}'s ${read.H} heads is what the grid can show, not what any head computes: each `
          + "head has its own query, keys, scores and values. Pick a head to see them."
        : `Head ${head + 1} of layer ${layer + 1}, one of ${read.H} that attend at once, each in its own d_k = ${read.dk} `
          + "numbers.");
      if (head === null) {
        write(this.weightTitle, "3. weights: the mean over the heads of each head's ", ["α", "tj"], ` = softmax(`, ["e", "t·"],
              `): (1, 1, S) = (1, 1, ${S})`);
      } else {
        write(this.weightTitle, "4. weights ", ["α", "tj"], " = softmax(", ["e", "t·"], `): (B, H, 1, S) → (1, 1, ${S})`);
        paint(this.strip, [read.queries[layer][head][i]], this.table);
        paint(this.keyRows, read.keys[layer][head], this.table);
        this.drawBars(this.scoreBars, read.scores[layer][head], i, -1);
        const values = read.values[layer][head];
        this.weightedValues ??= values.map((v) => new Float32Array(v.length));
        paint(this.valueRows, [...weigh(values, alpha, this.weightedValues), read.outputs[layer][head][i]], this.table);
      }
      this.drawBars(this.weightBars, weights, i, best);
      this.drawBars(this.coverageBars, this.coverage, i, -1);
      if (this.attribution) {
        const scores = this.attribution[i];
        this.drawBars(this.attributionBars, this.attribution, i, scores.indexOf(Math.max(...scores)));
      }
      const concatenated = this.concatenatedRow ??= new Float32Array(read.H * read.dk);
      read.outputs[layer].forEach((o, h) => concatenated.set(o[i], h * read.dk));
      paint(this.concatenated, [concatenated], this.table);
      paint(this.multiHead, [read.attended[layer][i]], this.table);
      setText(this.residual, `Then the residual: x_t + MultiHead_t goes on through a feed-forward layer`
        + (layer + 1 < read.L ? ` to layer ${layer + 2}, whose heads attend again.` : ", then to the output softmax that writes "
           + `${this.target[i]}.`));
    }
  }

  // The side's grid shown at once for a pick, from values in the page: its note and coverage row (the server wrote
  // every grid's under the grid, views.under_grid) and its alignment grid by piece, with its α, its title and what a
  // screen reader says for it. The side is the pick slot's ("left-grid-pick"); the server draws a grid by word.
  function drawPick(slot, model, pick) {
    const side = (slot.closest(".attn-pick-slot")?.id || "").replace(/-grid-pick$/, "");
    if (!side || !model.heads) return;
    for (const block of document.querySelectorAll(`#${side}-coverage .coverage-pick`)) block.hidden = block.dataset.pick !== pick.key;
    const plot = document.querySelector(`#${side}-grid .js-plotly-plot, #${side}-grid.js-plotly-plot`);
    if (!plot || !window.Plotly || plot.layout?.meta?.unit !== "pieces") return;
    const rows = crossOf(headsOf(model), pick);
    window.Plotly.update(plot, { z: [rows.map((row) => [...row])] }, { "title.text": pick.title, "meta.text": pick.text });
  }

  Object.assign(window.attnSteps, { HeadsView, SelfAttentionView, HeadStepView, readPick, drawPick, headsOf, crossOf, meanOf });
}
