(settings, pollRoom, sendVote, voterId) => {
  // The student's page of a room (student_page.py): the room drawn by classroom.js's view, a button for each
  // English piece, polls every settings.poll_s (longer after each refusal, up to settings.most_wait_s) and votes
  // through pollRoom and sendVote, the whole page's own calls (classroom.py). It starts from the room's state that
  // came with the page, whose buttons are in its HTML: the pieces are there at the first paint. Pieces and
  // messages are written with textContent; the server's lines come HTML-escaped (the whole page writes them as HTML).
  const view = window.attnClassroom.view(settings.phone);
  const note = document.getElementById(`${settings.phone}-note`);
  const pieces = document.getElementById("student-pieces");
  const voted = document.getElementById("student-voted");
  const page = document.getElementById("student-page");
  const voter = voterId();
  const text = (escaped) => new DOMParser().parseFromString(escaped, "text/html").documentElement.textContent;
  // the buttons came in the page's HTML for its room (student_page.piece_buttons): one listener for them all
  let room = settings.room, step = null, sent = 0;  // room: the one drawn last
  pieces.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (button && !button.disabled) vote([...pieces.children].indexOf(button));
  });

  function draw(next) {
    if (!next) return;
    view.draw(next);
    if (next.room !== room?.room || pieces.childElementCount !== next.english.length) buttons(next.english);
    if (next.step !== step) {  // a new step, a new guess
      step = next.step;
      pick(null);
      voted.textContent = "";
    }
    page.classList.toggle("attn-student-over", next.finished);
    for (const button of pieces.children) button.disabled = next.revealed || next.finished;
    room = next;
  }

  function buttons(english) {
    pieces.textContent = "";
    english.forEach((piece) => {
      const button = document.createElement("button");
      button.type = "button";
      button.lang = "en";
      button.textContent = piece;
      button.setAttribute("aria-pressed", "false");
      pieces.appendChild(button);
    });
  }

  function pick(j) {
    [...pieces.children].forEach((button, i) => button.setAttribute("aria-pressed", String(i === j)));
  }

  async function vote(j) {
    pick(j);
    const mine = ++sent;  // a later tap's answer is the one said
    voted.textContent = settings.sending;
    const line = await sendVote(settings.code, voter, room.step, j);
    if (mine === sent) voted.textContent = text(line);
  }

  async function poll() {
    const [next, said] = await pollRoom(settings.code, room);
    note.textContent = text(said);
    draw(next);
    const refused = said && said !== settings.offline;
    wait = refused ? Math.min(wait * settings.back_off, settings.most_wait_s) : settings.poll_s;
    if (!(room && room.finished)) setTimeout(poll, wait * 1000);
  }

  let wait = settings.poll_s;
  note.textContent = settings.refusal ? `⚠️ ${settings.refusal}` : "";
  draw(room);
  setTimeout(poll, wait * 1000);
}
