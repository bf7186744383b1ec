// The Annotate page's item view (issue 20): a queue of the next few items held in the browser.
//
// A key press answers the item on screen and shows the next one at once; the answers wait in `pending`
// and go to the server in the background as the component's state ("answers": every answer not yet
// acknowledged, with a fresh serial so that each send is a change).  The server stores each answer with
// its assignment id and render token and replies with the outcome per token and the queue as it is now.
// Untrusted text (queries, passages, names) only ever goes through textContent.
//
// Streamlit calls the default export again with new data on every run of the fragment, on the same
// parentElement: the queue lives on that element, so it survives reruns.

const RESEND_MS = 2000; // an answer the server has not acknowledged is sent again after this long

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function fillSegments(node, segments) {
  // [[text, marked], ...]: the server's query-term matches, drawn as <mark> without any HTML parsing
  node.replaceChildren();
  for (const [text, marked] of segments) {
    node.appendChild(marked ? el("mark", "", text) : document.createTextNode(text));
  }
}

class Queue {
  constructor(parent) {
    this.parent = parent;
    this.items = []; // not yet answered here; the first is on screen
    this.answered = new Set(); // tokens answered in this browser
    this.pending = []; // answers not yet acknowledged by the server
    this.serial = 0;
    this.lastSend = 0;
    this.busy = null; // a command (undo, previous) waiting for the server: keys wait too
    this.shownAt = performance.now();
    this.build();
    this.onKey = (event) => this.key(event);
    document.addEventListener("keydown", this.onKey, true);
    // closing the tab with answers not yet acknowledged would lose them: the browser asks first
    this.onLeave = (event) => {
      if (this.pending.length) event.preventDefault();
    };
    window.addEventListener("beforeunload", this.onLeave);
    this.timer = setInterval(() => this.resendIfStuck(), RESEND_MS / 2);
  }

  build() {
    const root = el("div", "pj-queue");
    root.dataset.testid = "annotate-queue";
    this.progress = el("div", "pj-progress");
    this.progress.dataset.testid = "annotate-progress";
    this.progressText = el("div", "pj-progress-text");
    this.bar = el("div", "pj-bar");
    this.barFill = el("div", "pj-bar-fill");
    this.bar.appendChild(this.barFill);
    this.progress.append(this.progressText, this.bar);
    this.refusals = el("div", "pj-refusals");
    this.refusals.setAttribute("role", "alert");
    this.refusals.dataset.testid = "annotate-refusals";
    this.card = el("div", "pj-card");
    this.queryBox = el("div", "pj-box");
    this.query = el("div", "pj-verbatim");
    this.queryBox.append(el("div", "pj-caption", "Query"), this.query);
    this.passageBox = el("div", "pj-box");
    this.title = el("div", "pj-verbatim pj-title");
    this.passage = el("div", "pj-verbatim");
    this.passage.dataset.testid = "annotate-passage";
    this.passageBox.append(el("div", "pj-caption", "Passage"), this.title, this.passage);
    this.info = el("div", "pj-refusal pj-info");
    this.card.append(this.info, this.queryBox, this.passageBox);
    this.buttons = el("div", "pj-grades");
    this.actions = el("div", "pj-actions");
    this.note = el("textarea", "pj-note");
    this.note.placeholder = "Note for a flag: what is unclear?";
    this.note.rows = 1;
    this.status = el("div", "pj-status");
    this.status.dataset.testid = "annotate-status";
    root.append(this.progress, this.refusals, this.card, this.buttons, this.actions, this.note, this.status);
    this.root = root;
    this.parent.appendChild(root);
  }

  update(data) {
    this.data = data;
    const outcomes = data.outcomes || {};
    const refused = [];
    this.pending = this.pending.filter((answer) => {
      const outcome = outcomes[answer.token];
      if (!outcome) return true;
      if (outcome.status === "refused") refused.push(`${answer.describe}: ${outcome.reason}`);
      return false;
    });
    if (refused.length) this.showRefusals(refused);
    if (data.command_done !== undefined && this.busy !== null && data.command_done >= this.busy) this.busy = null;
    const head = this.items[0];
    const fresh = (data.items || []).filter((item) => !this.answered.has(item.token));
    // the item on screen stays there while the server still serves it: nothing changes under the reader
    const keep = head && fresh.some((item) => item.token === head.token) && !data.reset;
    // while an undo or a move back waits for the server, no item: the next one is the one it decides
    this.items = this.busy !== null ? [] : keep ? [head, ...fresh.filter((item) => item.token !== head.token)] : fresh;
    if (!keep) this.shownAt = performance.now();
    this.draw(!keep);
    // the server has finished a run: what is still pending was sent after it started (or lost) and goes now
    this.inFlight = false;
    if (this.pending.length) this.send(null);
  }

  showRefusals(lines) {
    for (const line of lines) this.refusals.appendChild(el("div", "pj-refusal", line));
    while (this.refusals.childElementCount > 5) this.refusals.firstChild.remove();
  }

  levelsOf(item) {
    return (this.data.levels || {})[item.scale] || [];
  }

  draw(newItem) {
    const item = this.items[0];
    const waiting = this.pending.length ? ` · ${this.pending.length} answer(s) being saved` : "";
    if (this.busy !== null) {
      this.status.textContent = "Working…";
    } else if (!item) {
      this.status.textContent = this.pending.length || this.data.more ? `Loading the next item…${waiting}` : "";
    } else {
      this.status.textContent = waiting ? waiting.slice(3) : "";
    }
    this.root.dataset.token = item ? item.token : "";
    this.root.dataset.pending = String(this.pending.length); // 0: every answer given here is acknowledged
    this.root.dataset.busy = this.busy === null ? "" : "command"; // an undo or a move back not yet answered
    this.card.hidden = this.buttons.hidden = this.actions.hidden = this.note.hidden = !item;
    this.progress.hidden = !item;
    if (!item) {
      // nothing of the last item stays in the DOM, hidden or not
      for (const node of [this.progressText, this.query, this.title, this.passage, this.info]) node.replaceChildren();
      this.buttons.replaceChildren();
      this.root.dataset.shown = "";
      return;
    }
    if (newItem || this.root.dataset.shown !== item.token) {
      this.progressText.textContent = item.progress;
      this.barFill.style.width = `${item.total ? (100 * item.done) / item.total : 0}%`;
      fillSegments(this.query, item.query);
      fillSegments(this.title, item.title);
      this.title.hidden = !item.title.length;
      fillSegments(this.passage, item.passage);
      this.info.textContent = item.note
        ? `${item.note} Your label decides this item; the earlier reviewers' labels do not count.`
        : "";
      this.info.hidden = !item.note;
      this.note.value = "";
      this.drawButtons(item);
      this.root.dataset.shown = item.token;
    }
  }

  drawButtons(item) {
    this.buttons.replaceChildren();
    for (const level of this.levelsOf(item)) {
      const button = el("button", "pj-button", `${level.grade} · ${level.name}`);
      button.title = level.definition;
      button.type = "button";
      button.addEventListener("click", () => this.answer("label", level.grade));
      this.buttons.appendChild(button);
    }
    this.actions.replaceChildren();
    for (const [label, run] of [
      ["Previous", () => this.command("previous")],
      ["Skip", () => this.answer("skip", null)],
      ["Undo last label", () => this.command("undo")],
      ["Flag", () => this.answer("flag", null)],
    ]) {
      const button = el("button", "pj-button pj-action", label);
      button.type = "button";
      button.addEventListener("click", run);
      this.actions.appendChild(button);
    }
  }

  key(event) {
    if (!this.root.isConnected || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    const item = this.items[0];
    const key = event.key.toLowerCase();
    const level = item && this.levelsOf(item).find((lv) => lv.key === key);
    const actions = { s: () => this.answer("skip", null), f: () => this.answer("flag", null) };
    const commands = { u: "undo", p: "previous" };
    this.keyTime = event.timeStamp; // the press itself: the latency the page records starts here
    if (level) this.answer("label", level.grade);
    else if (actions[key] && item) actions[key]();
    else if (commands[key]) this.command(commands[key]);
    else return;
    event.preventDefault();
    event.stopPropagation();
  }

  answer(action, grade) {
    const item = this.items[0];
    if (!item || this.busy !== null) return;
    const started = this.keyTime ?? performance.now();
    this.keyTime = undefined;
    const note = action === "flag" ? this.note.value : "";
    this.answered.add(item.token);
    this.pending.push({
      assignment_id: item.assignment_id,
      token: item.token,
      action,
      grade,
      note,
      elapsed_ms: Math.max(0, Math.round(started - this.shownAt)),
      describe: item.describe,
    });
    this.items.shift();
    this.shownAt = performance.now();
    this.draw(true);
    // key -> next passage drawn, as the page measures it (benchmarks/bench_annotate_latency.py reads it)
    requestAnimationFrame(() => {
      (window.__pjLatency = window.__pjLatency || []).push(performance.now() - started);
    });
    // one message at a time: answers given meanwhile ride on the next one, so a burst of keys costs the
    // server (and this page) one run per reply rather than one interrupted run per key
    if (!this.inFlight) this.send(null);
  }

  command(name) {
    if (this.busy !== null) return;
    const head = this.items[0];
    this.serial += 1;
    this.busy = this.serial;
    this.items = [];
    this.draw(true);
    this.send({ name, serial: this.busy, shown: head ? head.assignment_id : null });
  }

  send(command) {
    this.inFlight = true;
    this.lastSend = performance.now();
    const answers = this.pending.map(({ describe, ...answer }) => answer);
    this.setState("answers", { sent: ++this.serial, answers, command });
  }

  resendIfStuck() {
    if (this.pending.length && performance.now() - this.lastSend > RESEND_MS) this.send(null);
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey, true);
    window.removeEventListener("beforeunload", this.onLeave);
    clearInterval(this.timer);
  }
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let queue = parentElement.__pjQueue;
  if (!queue || queue.session !== data.session) {
    if (queue) {
      queue.destroy();
      queue.root.remove();
    }
    queue = new Queue(parentElement);
    queue.session = data.session;
    parentElement.__pjQueue = queue;
  }
  queue.setState = setStateValue;
  queue.update(data);
  return () => {
    queue.destroy();
    delete parentElement.__pjQueue;
  };
}
