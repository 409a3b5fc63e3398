() => {
  // The network view: one model drawn as the nodes it computes an output step with, in the order it
  // computes them, top to bottom, with step t's values on them. It is drawn from the step payload
  // (attn_demo.views.steps.step_payload) by the step group of step_views.js, with that file's helpers,
  // into each element of class attn-network-slot. Nothing here names a model: the payload's `context_into`
  // (what reads c_t, from attention.KINDS), whether the model attends at all and whether it has heads
  // decide the order and the arrows; a model with heads is drawn as one decoder layer, the picked one
  // (heads_view.js's pick), its α the picked grid's. Built once per translation (and pick); a step change
  // rewrites the labels and the α lines, and a highlight runs down the nodes in the model's order (glow).
  // Pieces are user text: they are written as text (textContent, a text node's data), never as markup.
  const { node, svgNode, write, setText, textWidth, SIZES, HIGHLIGHT, MUTED } = window.attnSteps.draw;

  const GAP = 18, FAN = 34;  // between rows: room for an arrow, and for the α lines from the h_j to their reader
  const LANE = 10;  // between the node column and a lane of the arrows that skip rows
  const PAD = 5;  // inside a node, above and below its lines
  const LINE = 1.75;  // line height, in font sizes: a subscript (write's) reaches down 0.6 of one
  const PIECE = 14;  // the characters of a piece a node label shows; the caption and aria-label give it whole
  // The step's highlight (glow): fading in and out, resting on each node, moving to the next
  const GLOW_MS = { fade: 100, rest: 50, move: 40 };
  const REDUCED_MOTION = window.matchMedia("(prefers-reduced-motion: reduce)");  // then no highlight runs
  // An arrow that skips rows runs in a lane beside the nodes, chosen by what it carries: decoder
  // states on the left, c_t and (outermost) the h_j on the right, so that no two lanes overlap
  const LANES = { previous: -1, state: -1, self: -1, context: 1, encoder: 2 };
  const SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉";
  const sub = (symbol, n) => symbol + String(n).replace(/\d/g, (d) => SUBSCRIPT[d]);
  const shorten = (piece, n) => ([...piece].length > n ? `${[...piece].slice(0, n - 1).join("")}…` : piece);
  const plain = (parts) => parts.map((part) => (typeof part === "string" ? part : part.join(""))).join("");
  const dims = (typed) => typed.shape.split(",").map(Number);
  // each row's arrows in, from the nodes it reads ({row: [inputs]})
  const edgesInto = (rows, inputs) => rows.flatMap((to) => (inputs[to] || []).map((from) => [from, to]));

  // The nodes in the order the model computes them, and each one's inputs. context_into "gru": attention
  // runs first, on s_{t−1}, and the GRU reads c_t; "output": the GRU runs first, s_t is the query,
  // and only the output layer reads c_t. Without attention there is no score and no softmax: the
  // fixed c is made from the h_j once, and read like Bahdanau's c_t. A score that counts (payload
  // `counts`) also reads the coverage C_{t−1}, which the softmax's α_t then adds to.
  function graph(into, attends, counts) {
    const recur = ["gru", "state"];
    const attend = attends ? ["encoder", ...(counts ? ["coverage"] : []), "score", "softmax", "context"] : ["encoder", "context"];
    const rows = ["previous", ...(into === "gru" ? [...attend, ...recur] : [...recur, ...attend]), "output", "emitted"];
    const inputs = {
      score: [into === "gru" ? "previous" : "state", "encoder", ...(counts ? ["coverage"] : [])], softmax: ["score"],
      context: attends ? ["softmax", "encoder"] : ["encoder"], gru: into === "gru" ? ["previous", "context"] : ["previous"],
      state: ["gru"], output: ["state", "context"], emitted: ["output"],
    };
    return { rows, edges: edgesInto(rows, inputs) };
  }

  // A Transformer's decoder layer (pre-norm, attn_demo.models.transformer.DecoderLayer): x_t runs down the residual
  // stream through three sublayers, each reading LN(x_t) and adding its output back to x_t; the cross-attention
  // reads the h_j, the layers above do the same again, and the output layer reads LN(x_t) of the top one.
  function layerGraph() {
    const rows = ["previous", "self", "encoder", "cross", "feedforward", "above", "output", "emitted"];
    const inputs = { self: ["previous"], cross: ["self", "encoder"], feedforward: ["cross"], above: ["feedforward"],
                     output: ["above"], emitted: ["output"] };
    return { rows, edges: edgesInto(rows, inputs) };
  }

  // The h_j a row of K cells shows: all when they fit; otherwise h_1, h_S and as many as fit around
  // the most attended, with a gap cell [from, to) for each run left out.
  function visible(S, K, best) {
    if (S <= K) return Array.from({ length: S }, (_, j) => j);
    const cells = (lo, hi) => (hi - lo + 1) + (lo > 0) + (lo > 1) + (hi < S - 1) + (hi < S - 2);
    let lo = best, hi = best;
    for (let grew = true; grew;) {
      grew = false;
      if (hi < S - 1 && cells(lo, hi + 1) <= K) { hi += 1; grew = true; }
      if (lo > 0 && cells(lo - 1, hi) <= K) { lo -= 1; grew = true; }
    }
    const around = Array.from({ length: hi - lo + 1 }, (_, k) => lo + k);
    return [...(lo > 0 ? [0] : []), ...(lo > 1 ? [[1, lo]] : []), ...around,
            ...(hi < S - 2 ? [[hi + 1, S - 1]] : []), ...(hi < S - 1 ? [S - 1] : [])];
  }

  class NetworkView {
    constructor(container, model, large) {
      this.model = model;
      this.source = model.source;
      this.target = model.target;
      this.attends = model.weights !== null;  // false: the no-attention baseline, one fixed c
      this.layers = model.heads ? window.attnSteps.headsOf(model) : null;  // a Transformer's every head, read once
      // a Transformer's α is its picked grid's, set when it is laid out for the pick (show)
      this.weights = this.attends && !this.layers ? window.attnSteps.draw.floats(model.weights) : null;
      this.S = this.source.length;
      this.D = this.layers ? dims(model.heads.attended)[2] : dims(model.contexts)[1];
      this.H = this.attends && !this.layers ? dims(model.queries)[1] : null;
      this.font = (large ? SIZES.large : SIZES.normal).font;
      this.graph = this.layers ? layerGraph() : graph(model.context_into, this.attends, model.counts);

      container.textContent = "";
      this.root = node("div", { class: "attn-network" }, container);
      this.root.style.fontSize = `${this.font}px`;
      node("div", { class: "attn-step-title" }, this.root).textContent = `${model.title}: the network, in the order it computes`;
      if (!this.attends) {
        node("p", { class: "attn-network-lacks" }, this.root).textContent = "No attention: no score and no softmax. Every "
          + "step reads the same fixed c = [→h_S; ←h_1], whatever it writes, so the whole sentence must fit in those "
          + `${this.D} numbers.`;
      }
      this.caption = node("div", { class: "attn-network-caption" }, this.root);
      const scroll = node("div", { class: "attn-scroll" }, this.root);  // a diagram wider than a phone scrolls in here
      this.svg = svgNode("svg", { role: "img", class: "attn-network-svg" }, scroll);
      this.width = Math.max(container.clientWidth - 16, 240);
      this.measured = new Map();  // a line's width by font size and text: measured once (measure)
      if (!this.layers) this.layout();  // a Transformer's waits for its pick (show)
    }

    // A Transformer's picked layer and grid (the step group sets this.pick): its cross-attention α, its masked
    // self-attention (the head's, or the mean of the layer's heads) and the diagram laid out for them.
    layOutPick() {
      const { layer, head } = this.pick, read = this.layers;
      this.weights = window.attnSteps.crossOf(read, this.pick);
      this.selfWeights = head === null ? window.attnSteps.meanOf(read.decoder[layer]) : read.decoder[layer][head];
      this.laidOutFor = this.pick;
      // laid out for another pick: the same nodes, kept if this pick's lines fit, by a generous estimate first
      // (measuring in the page forces a layout for each new line: tens of milliseconds a pick), then as measured
      if (this.nodes && (this.widest(textWidth) + 20 <= this.column || this.measuredFit())) return;
      this.layout();
    }

    // The piece the decoder reads at input position k (from 0): <s>, then what it wrote before.
    inputPiece(k) {
      return k ? this.target[k - 1] : "<s>";
    }

    labels(i, best) {
      return this.layers ? this.layerLabels(i, best) : this.recurrentLabels(i, best);
    }

    // Each node's lines at step i (0-based), as parts for write(): the first line says what the node
    // is, the others its value or shape (the shapes the step view prints), in a smaller font.
    recurrentLabels(i, best) {
      const t = i + 1, p = String(i), into = this.model.context_into, S = this.S;
      const c = this.attends ? ["c", String(t)] : "c", y = ["y", String(t)], before = ["y", p];
      const query = `query (B, 1, H) = (1, 1, ${this.H})`;
      const attention = this.attends ? {
        score: [["score ", ["e", `${t}j`]], this.model.score, [`(B, 1, S) = (1, 1, ${S})`]],
        softmax: [["softmax → ", ["α", `${t}j`]], ["most on ", shorten(this.source[best], PIECE),
                                                   `: α = ${this.weights[i][best].toFixed(2)}`], [`(B, 1, S) = (1, 1, ${S})`]],
        coverage: [["coverage ", ["C", `${i}j`], " = Σ ", ["α", "t′j"], ` over steps before ${t}`],
                   [["C", `${t}j`], " = ", ["C", `${i}j`], " + ", ["α", `${t}j`], " after the softmax"], [`(B, 1, S) = (1, 1, ${S})`]],
      } : {};
      return {
        ...attention,
        previous: [[["s", p], `: the state before step ${t}`], [into === "gru" && this.attends ? query : "read by the GRU"]],
        encoder: [["annotations ", ["h", "j"], `: (B, S, D) = (1, ${S}, ${this.D})`]],
        context: this.attends
          ? [[c, " = Σ ", ["α", `${t}j`], ["h", "j"]], [`(B, 1, D) = (1, 1, ${this.D})`],
             [into === "gru" ? "read by the GRU and the output layer" : "read by the output layer alone"]]
          : [["c = [→", ["h", "S"], "; ←", ["h", "1"], "]"], [`(B, 1, D) = (1, 1, ${this.D})`], ["fixed: the same at every step"]],
        gru: [["GRU, fed ", before, " = ", shorten(this.inputPiece(i), PIECE)],
              [["s", String(t)], " = GRU(", ...(into === "gru" ? ["[E ", before, "; ", c, "]"] : ["E ", before]), ", ", ["s", p], ")"]],
        state: [[["s", String(t)], ": the new state"],
                [!this.attends ? "read by the output layer" : into === "gru" ? "read by the output layer; the next query" : query]],
        output: [["output layer → p(", y, ")"], into === "gru"
          ? ["tanh(", ["W", "o"], " [", ["s", String(t)], "; ", c, "; E ", before, "])"]
          : [["h̃", String(t)], " = tanh(", ["W", "c"], " [", c, "; ", ["s", String(t)], "])"]],
        emitted: [[y, " = ", shorten(this.target[i], PIECE)]],
      };
    }

    // A Transformer's decoder layer at step i, the same way: the picked layer's sublayers with its grid's α.
    layerLabels(i, best) {
      const t = i + 1, p = String(i), S = this.S, D = this.D, { L, H, dk, activation } = this.layers, { layer, head } = this.pick;
      const x = ["x", String(t)], before = ["y", p], reader = head === null ? `the ${H} heads' mean` : `head ${head + 1}`;
      const written = this.selfWeights[i], most = written.indexOf(Math.max(...written.slice(0, t)));  // of y_0 … y_{t−1}
      const above = layer + 1 === L ? [[`layer ${L} is the top one`], ["then LN(", x, ")"]]
        : [[layer + 2 === L ? `layer ${L}: the same three` : `layers ${layer + 2} … ${L}: the same three`],
           ["each on the layer below's ", x, "; then LN(", x, ")"]];
      return {
        previous: layer === 0
          ? [[x, " = √D E ", before, " + PE(", String(t), "), ", before, " = ", shorten(this.inputPiece(i), PIECE)],
             [`into layer 1 of ${L}: (B, 1, D) = (1, 1, ${D})`]]
          : [[x, ` from layer ${layer}, at step ${t}`], [`into layer ${layer + 1} of ${L}: (B, 1, D) = (1, 1, ${D})`]],
        self: [["masked self-attention over ", ["y", "0"], ...(i ? [" … ", before] : [])],
               [x, " ← ", x, " + SelfAttention(LN(", x, "))"],
               [`${reader} most on `, shorten(this.inputPiece(most), PIECE), `: α = ${written[most].toFixed(2)}`],
               [`(B, H, 1, t) = (1, ${H}, 1, ${t})`]],
        encoder: [["annotations ", ["h", "j"], `: (B, S, D) = (1, ${S}, ${D})`]],
        cross: [[`cross-attention, ${H} heads of `, ["d", "k"], ` = ${dk}`],
                [["α", `${t}j`], " = softmax(", ["q", String(t)], " · ", ["k", "j"], " / √", ["d", "k"], ")"],
                [`${reader} most on `, shorten(this.source[best], PIECE), `: α = ${this.weights[i][best].toFixed(2)}`],
                [x, " ← ", x, " + ", ["W", "O"], " [", ["o", String(t)], "¹; …; ", ["o", String(t)], "ᴴ]"],
                [`(B, H, 1, S) = (1, ${H}, 1, ${S})`]],
        feedforward: [["feed-forward, this position alone"],
                      [x, " ← ", x, " + ", ["W", "2"], " " + activation, ["W", "1"], " LN(", x, ") + ", ["b", "1"], ") + ", ["b", "2"]]],
        above,
        output: [["output layer → p(", ["y", String(t)], ")"], ["softmax(", ["E", "y"], " LN(", x, ") + b)"]],
        emitted: [[["y", String(t)], " = ", shorten(this.target[i], PIECE)]],
      };
    }

    // Step i in words: the caption, and the diagram's text alternative.
    describe(i, best) {
      const t = i + 1, y = this.target[i], before = this.inputPiece(i);
      if (!this.attends) {
        return `Step ${t}: no score, no softmax. The GRU reads the fixed c with ${sub("s", i)} and ${before} to make `
          + `${sub("s", t)}; the output layer writes ${y}.`;
      }
      const alpha = `α puts ${this.weights[i][best].toFixed(2)} on ${this.source[best]}`;
      if (this.layers) {
        const { L } = this.layers, { layer, name } = this.pick;
        return `Step ${t}, ${name}: ${sub("x", t)} carries ${before} at position ${t} into layer ${layer + 1} of ${L}; `
          + `masked self-attention reads the ${t} piece${t > 1 ? "s" : ""} written so far; cross-attention scores ${this.S} English pieces: `
          + `${alpha}; a feed-forward layer${layer + 1 < L ? ", then the layers above" : ""}; the output layer writes ${y}.`;
      }
      if (this.model.context_into === "gru") {
        return `Step ${t}: ${sub("s", i)} scores ${this.S} English pieces; ${alpha}; ${sub("c", t)} feeds the GRU, which `
          + `makes ${sub("s", t)}; the output layer writes ${y}.`;
      }
      return `Step ${t}: the GRU makes ${sub("s", t)} from ${sub("s", i)} and ${before}; ${sub("s", t)} scores ${this.S} `
        + `English pieces; ${alpha}; ${sub("c", t)} feeds the output layer; it writes ${y}.`;
    }

    best(i) {
      if (!this.attends) return 0;
      const weights = this.weights[i];
      return weights.reduce((best, w, j) => (w > weights[best] ? j : best), 0);
    }

    // Sizes from the widest line any step will write, so that no label leaves its box: the column
    // is the container's width or that, and a diagram wider than its container scrolls sideways.
    layout() {
      this.svg.textContent = "";  // a Transformer's, laid out again for a pick whose lines are wider
      this.tip = svgNode("title", {}, this.svg);
      this.ruler = svgNode("text", {}, this.svg);
      this.f1 = this.font - 1;
      this.f2 = this.font - 2;
      this.cell = this.measure("▁abcde", this.f2) + 8;  // the narrowest h_j cell: about five characters of a piece
      this.x0 = 8 + LANE;
      this.column = Math.max(this.width - this.x0 - 2 * LANE - 8, this.widest() + 20, 5 * this.cell);
      this.x1 = this.x0 + this.column;
      this.svg.setAttribute("width", this.x1 + 2 * LANE + 8);

      const first = this.labels(0, 0);
      this.nodes = {};
      let y = 4;
      this.graph.rows.forEach((name, k) => {
        const group = svgNode("g", { class: "attn-net-node", "data-node": name }, this.svg);
        const box = name === "encoder" ? this.encoderRow(group, y, first.encoder) : this.box(group, y, first[name]);
        this.nodes[name] = { group, ...box };
        y = box.bottom + (name === "encoder" ? FAN : GAP);
      });
      this.svg.setAttribute("height", y - GAP + 4);
      this.glow();
      this.fans = this.cells.map(() => svgNode("line", { class: "attn-net-fan" }, this.nodes.encoder.group));
      for (const [from, to] of this.graph.edges) if (from !== "encoder" || !this.adjacent(from, to)) this.arrow(from, to);
      this.ruler.remove();
    }

    // The highlight a step change runs down the nodes in the model's order: one box over the diagram that rests on
    // each node in turn, moved by transform and faded by opacity alone, which the compositor animates. One box, one
    // layer: a box a node made a layer each, and the page's layers cost each step change ~5 ms more to lay out.
    glow() {
      const scroll = this.svg.parentElement, rows = this.graph.rows, { fade, rest, move } = GLOW_MS;
      scroll.querySelector(".attn-net-glow")?.remove();
      this.glowBox = node("div", { class: "attn-net-glow", "aria-hidden": "true" }, scroll);
      const tall = (name) => this.nodes[name].bottom - this.nodes[name].top, height = tall(rows[0]);
      Object.assign(this.glowBox.style, { left: `${this.x0}px`, width: `${this.column}px`, height: `${height}px` });
      const total = 2 * fade + rows.length * rest + (rows.length - 1) * move;
      const frame = (ms, name, opacity) => ({
        offset: ms / total, opacity, transform: `translateY(${this.nodes[name].top}px) scaleY(${tall(name) / height})` });
      this.glowFrames = [frame(0, rows[0], 0), ...rows.flatMap((name, k) => {
        const arrives = fade + k * (rest + move);
        return [frame(arrives, name, 1), frame(arrives + rest, name, 1)];
      }), frame(total, rows[rows.length - 1], 0)];
      this.glowMs = total;
    }

    // A line's width in the page's font, measured once per text and size with the ruler in the diagram (an estimate
    // where nothing is laid out).
    measure(text, size) {
      const key = `${size} ${text}`;
      if (!this.measured.has(key)) {
        this.ruler.style.fontSize = `${size}px`;
        this.ruler.textContent = text;
        this.measured.set(key, this.ruler.getComputedTextLength() || textWidth(text, size));
      }
      return this.measured.get(key);
    }

    // Whether the widest line, measured in the page, fits the column laid out.
    measuredFit() {
      this.ruler = svgNode("text", {}, this.svg);
      const fits = this.widest() + 20 <= this.column;
      this.ruler.remove();
      return fits;
    }

    // The widest line any step writes, measured in the page or by `width(text, size)`.
    widest(width = (text, size) => this.measure(text, size)) {
      return Math.max(...this.target.flatMap((_, i) => Object.values(this.labels(i, this.best(i)))
        .flatMap((node) => node.map((line, k) => width(plain(line), k ? this.f2 : this.f1)))));
    }

    // A piece shortened (…) until it fits in room pixels of the cells' font.
    fit(piece, room) {
      let n = [...piece].length;
      while (n > 2 && this.measure(shorten(piece, n), this.f2) > room) n -= 1;
      return shorten(piece, n);
    }

    adjacent(from, to) {
      const rows = this.graph.rows;
      return rows.indexOf(to) === rows.indexOf(from) + 1;
    }

    // A node: a box with a line of text per label line, the first in the larger font.
    box(group, top, lines) {
      const l1 = LINE * this.f1, l2 = LINE * this.f2, height = 2 * PAD + l1 + (lines.length - 1) * l2;
      svgNode("rect", { x: this.x0, y: top, width: this.column, height, rx: 6 }, group);
      const texts = lines.map((_, k) => {
        const text = svgNode("text", { x: this.x0 + 8, y: top + PAD + 0.8 * l1 + k * l2 }, group);
        text.style.fontSize = `${k ? this.f2 : this.f1}px`;
        return text;
      });
      return { top, bottom: top + height, middle: top + height / 2, texts };
    }

    // The encoder's annotations: a caption, then a row of cells (h_j, its piece, its α), as many as fit.
    encoderRow(group, top, caption) {
      const l2 = LINE * this.f2;
      const title = svgNode("text", { x: this.x0, y: top + 0.8 * l2 }, group);
      title.style.fontSize = `${this.f2}px`;
      write(title, ...caption[0]);
      const K = Math.min(this.S, Math.floor(this.column / this.cell)), width = this.column / K;
      const y = top + l2 + 4, height = 3 * l2 + 2 * PAD;
      this.pieces = this.source.map((piece) => this.fit(piece, width - 8));
      this.cells = Array.from({ length: K }, (_, k) => {
        const cell = svgNode("g", { class: "attn-net-cell" }, group);
        const x = this.x0 + k * width;
        cell.rect = svgNode("rect", { x: x + 1.5, y, width: width - 3, height, rx: 4 }, cell);
        cell.tip = svgNode("title", {}, cell);
        cell.lines = [0, 1, 2].map((n) => {
          const text = svgNode("text", { x: x + width / 2, y: y + PAD + 0.8 * l2 + n * l2, "text-anchor": "middle" }, cell);
          text.style.fontSize = `${this.f2}px`;
          return text;
        });
        cell.centre = x + width / 2;
        return cell;
      });
      return { top, bottom: y + height, middle: y + height / 2, texts: [] };
    }

    // An arrow from one node to another: straight down to the next row, or along its lane to a later one.
    arrow(from, to) {
      const a = this.nodes[from], b = this.nodes[to], lane = LANES[from], mid = (this.x0 + this.x1) / 2;
      const group = svgNode("g", { class: "attn-net-edge" }, this.svg);
      let points, tip;
      if (this.adjacent(from, to)) {
        points = [[mid, a.bottom], [mid, b.top - 5]];
        tip = [[mid, b.top], [mid - 4, b.top - 6], [mid + 4, b.top - 6]];
      } else if (lane < 0) {
        const x = 8;
        points = [[this.x0, a.middle], [x, a.middle], [x, b.middle], [this.x0 - 5, b.middle]];
        tip = [[this.x0, b.middle], [this.x0 - 6, b.middle - 4], [this.x0 - 6, b.middle + 4]];
      } else {  // right: leaves below the middle, enters above it, so a lane that ends where another starts stays apart
        const x = this.x1 + lane * LANE;
        points = [[this.x1, a.middle + 4], [x, a.middle + 4], [x, b.middle - 4], [this.x1 + 5, b.middle - 4]];
        tip = [[this.x1, b.middle - 4], [this.x1 + 6, b.middle - 8], [this.x1 + 6, b.middle]];
      }
      svgNode("polyline", { points: points.join(" ") }, group);
      svgNode("polygon", { points: tip.join(" ") }, group);
    }

    // Output step t (1-based); a model that stopped earlier shows its last step and says so.
    show(t) {
      if (this.layers && this.laidOutFor !== this.pick) this.layOutPick();
      const T = this.target.length, i = Math.min(t, T) - 1, best = this.best(i);
      const labels = this.labels(i, best);
      for (const [name, { texts }] of Object.entries(this.nodes)) texts.forEach((text, k) => write(text, ...labels[name][k]));
      this.nodes.emitted.group.dataset.piece = this.target[i];
      if (this.attends) this.nodes[this.layers ? "cross" : "softmax"].group.dataset.piece = this.source[best];
      this.fillCells(i, best);
      const words = this.describe(i, best) + (t > T ? ` This model stopped after ${T} steps.` : "");
      setText(this.caption, words);
      this.svg.setAttribute("aria-label", words);
      setText(this.tip, words);
      this.glowing?.cancel();
      if (!REDUCED_MOTION.matches) this.glowing = this.glowBox.animate(this.glowFrames, this.glowMs);
    }

    // The row of h_j at step i: each cell's piece and α, and its line to the node that reads it, as
    // thick as its α (the fixed c reads only h_1 and h_S).
    fillCells(i, best) {
      const shown = visible(this.S, this.cells.length, best), reader = this.nodes[this.graph.rows[this.graph.rows.indexOf("encoder") + 1]];
      const mid = (this.x0 + this.x1) / 2, weights = this.attends ? this.weights[i] : null;
      this.cells.forEach((cell, k) => {
        const at = shown[k], fan = this.fans[k];
        cell.style.display = fan.style.display = at === undefined ? "none" : "";
        if (at === undefined) return;
        const gap = Array.isArray(at), [from, to] = gap ? at : [at, at + 1];
        const alpha = weights ? weights.slice(from, to).reduce((a, b) => a + b, 0) : null;
        const reads = !this.attends && (at === 0 || at === this.S - 1);
        if (gap) {
          write(cell.lines[0], "…");
          write(cell.lines[1], `${to - from} more`);
          setText(cell.tip, `h${from + 1} … h${to}: ${to - from} pieces left out here` + (weights ? `, α ${alpha.toFixed(2)} in all` : ""));
        } else {
          write(cell.lines[0], ["h", String(at + 1)]);
          write(cell.lines[1], this.pieces[at]);
          setText(cell.tip, `h${at + 1}: ${this.source[at]}` + (weights ? `, α = ${alpha.toFixed(3)}` : ""));
        }
        write(cell.lines[2], weights ? alpha.toFixed(2) : reads ? (at === 0 ? "← in c" : "→ in c") : "");  // c's two halves
        cell.classList.toggle("attn-net-best", !gap && this.attends && at === best);
        cell.dataset.piece = gap ? "" : this.source[at];
        fan.setAttribute("x1", cell.centre);
        fan.setAttribute("y1", this.nodes.encoder.bottom);
        fan.setAttribute("x2", mid);
        fan.setAttribute("y2", reader.top - 1);
        fan.setAttribute("stroke", !gap && at === best && this.attends ? HIGHLIGHT : MUTED);
        fan.setAttribute("stroke-width", weights ? 0.75 + 7 * alpha : 2);
        if (!this.attends && !reads) fan.style.display = "none";
        if (gap) fan.setAttribute("stroke-dasharray", "3 3");
        else fan.removeAttribute("stroke-dasharray");
      });
    }
  }

  window.attnSteps.NetworkView = NetworkView;
}
