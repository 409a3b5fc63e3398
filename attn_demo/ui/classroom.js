() => {
  // "Predict, then reveal" (classroom.py), drawn in the browser from a room's JSON (classroom.Room.view):
  // the projector draws class_tally's, a phone class_state's, each about once a second. A view redraws only
  // when the room has changed (its version). It shows the step, the sentence and the French so far; a table
  // with a row per English piece, the class's votes and, once revealed, the model's α as bars; how the class
  // did; and after the last step the summary of every step. window.attnClassroom.view(id) is the view bound
  // to the page element with that id; where the page has an element `${id}-answer` (a phone's, under its
  // buttons), the table and what follows it are drawn there. Pieces are model output and user text: written
  // with textContent.
  function node(tag, attributes = {}, parent = null, text = null) {
    const element = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
    if (text !== null) element.textContent = text;
    if (parent) parent.appendChild(element);
    return element;
  }
  const words = (pieces) => pieces.filter((p) => p !== "</s>").join("").replaceAll("\u2581", " ").trim();
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

  // A cell with a bar of `fraction` of its width and the number beside it.
  function bar(row, fraction, label, kind) {
    const cell = node("td", {}, row);
    const track = node("span", { class: "attn-class-track" }, cell);
    node("span", { class: `attn-class-bar attn-class-${kind}` }, track).style.width = `${Math.round(100 * fraction)}%`;
    node("span", { class: "attn-class-value" }, cell, label);
  }

  class RoomView {
    constructor(root) {
      this.root = root;
      this.drawn = null;
    }

    draw(room) {
      if (!room || !this.root || `${room.room}:${room.version}` === this.drawn) return;
      this.drawn = `${room.room}:${room.version}`;
      this.answer = document.getElementById(`${this.root.id}-answer`) || this.root;
      this.root.textContent = "";
      this.answer.textContent = "";
      this.root.classList.toggle("attn-class-over", room.finished);  // a phone hides its buttons (classroom.css)
      const step = room.finished ? `All ${room.steps} steps done` : `Step ${room.step} of ${room.steps}`;
      node("p", { class: "attn-class-step" }, this.root, `Room ${room.room} · ${step}`);
      const english = node("p", { class: "attn-class-sentence" }, this.root, "English: ");
      node("span", { lang: "en" }, english, words(room.english));
      const french = node("p", { class: "attn-class-sentence" }, this.root, room.finished ? "French: " : "French so far: ");
      node("span", { lang: "fr" }, french, room.french.length ? words(room.french) : "(nothing yet)");
      if (room.summary) return this.summary(room);
      if (room.counts || room.alpha) this.table(room);
      if (room.result) this.result(room);
    }

    table(room) {
      const votes = room.counts ? room.counts.reduce((a, b) => a + b, 0) : 0;
      const table = node("table", { class: "attn-class-table" }, this.answer);
      node("caption", {}, table, room.alpha ? `Step ${room.step}: the class's votes and the model's α`
        : `Step ${room.step}: ${plural(votes, "vote", "votes")} so far`);
      const head = node("tr", {}, node("thead", {}, table));
      node("th", { scope: "col" }, head, "English piece");
      if (room.counts) node("th", { scope: "col" }, head, "Class's votes");
      if (room.alpha) node("th", { scope: "col" }, head, "Model's α");
      const body = node("tbody", {}, table);
      room.english.forEach((piece, j) => {
        const row = node("tr", room.result && j === room.result.argmax ? { class: "attn-class-argmax" } : {}, body);
        node("th", { scope: "row" }, row, piece);
        if (room.counts) bar(row, votes ? room.counts[j] / votes : 0, String(room.counts[j]), "votes");
        if (room.alpha) bar(row, room.alpha[j], room.alpha[j].toFixed(2), "alpha");
      });
    }

    result(room) {
      const r = room.result, best = room.english[r.argmax];
      const line = node("p", { class: "attn-class-result" }, this.answer);
      line.textContent = `To write ${r.written} the model looked most at ${best} (α ${room.alpha[r.argmax].toFixed(2)}). ` +
        (r.votes ? `${r.picked_argmax} of ${plural(r.votes, "vote", "votes")} picked it; α on the class's picks: ` +
          `${r.alpha_on_picks.toFixed(2)}.` : "Nobody voted at this step.");
    }

    summary(room) {
      const voted = room.summary.filter((s) => s.agreed !== null), agreed = voted.filter((s) => s.agreed);
      node("p", { class: "attn-class-result" }, this.answer, `The class's most-voted piece was the model's at ` +
        `${agreed.length} of the ${plural(voted.length, "step", "steps")} with votes.`);
      const table = node("table", { class: "attn-class-summary" }, this.answer);
      node("caption", {}, table, "Every step: the piece the class voted for most, and the piece the model looked at most");
      const head = node("tr", {}, node("thead", {}, table));
      for (const title of ["Step", "French written", "Class's pick", "Model's pick", "Agreed"]) node("th", { scope: "col" }, head, title);
      const body = node("tbody", {}, table);
      for (const s of room.summary) {
        const row = node("tr", { class: s.agreed === false ? "attn-class-disagreed" : "" }, body);
        node("th", { scope: "row" }, row, String(s.step));
        node("td", {}, row, s.written);
        node("td", {}, row, s.class_picks.map((j) => room.english[j]).join(" / ") || "(none)");
        node("td", {}, row, room.english[s.argmax]);
        node("td", {}, row, s.agreed === null ? "–" : s.agreed ? "✓ yes" : "✗ no");
      }
      if (!room.lesson) return;
      const lesson = node("p", { class: "attn-class-lesson" }, this.answer, `${room.lesson.text} Read on: `);
      room.lesson.links.forEach((link, i) => {
        if (i) lesson.append(" · ");
        node("a", { href: link.href }, lesson, link.text);
      });
    }
  }

  const views = new Map();  // element id → its RoomView
  window.attnClassroom = {
    view(id) {
      const root = document.getElementById(id);
      if (!views.has(id) || views.get(id).root !== root) views.set(id, new RoomView(root));
      return views.get(id);
    },
  };
}
