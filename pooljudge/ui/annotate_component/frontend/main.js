// The Annotate page's item view: a queue of the next few items held in the browser.
//
// A key press answers the item on screen and shows the next one at once; the answers wait in `pending`
// and go to the server in the background as the component's state ("answers": every answer not yet
// acknowledged, with a fresh serial so that each send is a change).  The server stores each answer with
// its assignment id and render token and replies with the outcome per token and the queue as it is now.
// Untrusted text (queries, passages, names) only ever goes through textContent.
//
// What a key press does before the next frame is kept to the swap itself: the next items' cards are built
// ahead (detached from the page, so nothing of them is found or read before they are shown), and sending the
// answer, which makes Streamlit's own frontend process and re-render, waits until that frame has been drawn.
// A server answer changes only what changed: the card on screen and the buttons stay as they are.
//
// Streamlit calls the default export again with new data on every run of the fragment, on the same
// parentElement: the queue lives on that element, so it survives reruns.

// an answer the server has not acknowledged is sent again after this long (a message lost on a reconnect);
// a new message restarts the server's run, so sending again sooner would restart a slow run over and over
const RESEND_MS = 10000;
const BUILT_AHEAD = 2; // cards built before they are needed: two keys within one frame still only swap

function afterPaint(run) {
  // a message posted from an animation frame callback is handled once that frame is drawn
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => run();
    channel.port2.postMessage(null);
  });
}

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

function recordLatency(started, handled) {
  // key -> next passage drawn, as the page measures it (benchmarks/bench_annotate_latency.py reads it), and
  // where the time went: waiting for the main thread, then drawing the next item (or waiting for the server
  // when the queue had run dry), then until the frame that shows it began
  const drawn = performance.now();
  requestAnimationFrame(() => {
    const frame = performance.now();
    (window.__pjLatency = window.__pjLatency || []).push(frame - started);
    (window.__pjLatencyParts = window.__pjLatencyParts || []).push([handled - started, drawn - handled, frame - drawn]);
  });
}

function progressLine(item, done) {
  return `${item.kind} ${item.package}: ${done} of ${item.total} labelled · item ${item.position}`;
}

function makeCard(item) {
  // one item's texts, built off the page; the card on screen is the only one in the document
  const card = el("div", "pj-card");
  const info = el("div", "pj-refusal pj-info");
  info.textContent = item.note
    ? `${item.note} Your label decides this item; the earlier reviewers' labels do not count.`
    : "";
  info.hidden = !item.note;
  const query = el("div", "pj-verbatim");
  fillSegments(query, item.query);
  const queryBox = el("div", "pj-box");
  queryBox.append(el("div", "pj-caption", "Query"), query);
  const title = el("div", "pj-verbatim pj-title");
  fillSegments(title, item.title);
  title.hidden = !item.title.length;
  const passage = el("div", "pj-verbatim");
  passage.dataset.testid = "annotate-passage";
  fillSegments(passage, item.passage);
  const passageBox = el("div", "pj-box");
  passageBox.append(el("div", "pj-caption", "Passage"), title, passage);
  card.append(info, queryBox, passageBox);
  return card;
}

class Queue {
  constructor(parent) {
    this.parent = parent;
    this.items = []; // not yet answered here; the first is on screen
    this.answered = new Set(); // tokens answered in this browser
    this.pending = []; // answers not yet acknowledged by the server
    this.cards = new Map(); // token -> its card, built ahead of the key press that shows it
    this.serial = 0;
    this.lastSend = 0;
    this.busy = null; // a command (undo, previous) waiting for the server: keys wait too
    // that command, sent with every message until the server says it was carried out: a later message
    // replaces the component's state, and a run that read the state before the command would leave it unread
    this.pendingCommand = null;
    this.shownAt = performance.now();
    this.build();
    this.onKey = (event) => this.key(event);
    document.addEventListener("keydown", this.onKey, true);
    // the release of a key this queue took is its own too: the page's other key handlers (and the work they
    // start) would run between the swap and the frame that shows it
    this.taken = new Set();
    this.onKeyUp = (event) => {
      if (!this.taken.delete(event.code)) return;
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    window.addEventListener("keyup", this.onKeyUp, true);
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
    this.slot = el("div", "pj-slot"); // holds the card of the item on screen
    this.buttons = el("div", "pj-grades");
    this.actions = el("div", "pj-actions");
    this.note = el("textarea", "pj-note");
    this.note.placeholder = "Note for a flag: what is unclear?";
    this.note.rows = 1;
    this.status = el("div", "pj-status");
    this.status.dataset.testid = "annotate-status";
    root.append(this.progress, this.refusals, this.slot, this.buttons, this.actions, this.note, this.status);
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
    if (data.command_done !== undefined && this.busy !== null && data.command_done >= this.busy) {
      this.busy = null;
      this.pendingCommand = null;
    }
    const head = this.items[0];
    const fresh = (data.items || []).filter((item) => !this.answered.has(item.token));
    // the item on screen stays there while the server still serves it: nothing changes under the reader
    const keep = head && fresh.some((item) => item.token === head.token) && !data.reset;
    // while an undo or a move back waits for the server, no item: the next one is the one it decides
    if (this.busy !== null) this.items = [];
    else if (keep) this.items = [...fresh.filter((i) => i.token === head.token), ...fresh.filter((i) => i.token !== head.token)];
    else this.items = fresh;
    if (!keep) this.shownAt = performance.now();
    this.draw();
    if (this.awaiting && (this.items.length || !data.more)) {
      recordLatency(this.awaiting.started, this.awaiting.handled);
      this.awaiting = undefined;
    }
    afterPaint(() => this.buildAhead());
    // the server has finished a run: what is still pending was sent after it started (or lost) and goes now
    this.inFlight = false;
    if (this.pending.length || this.pendingCommand !== null) this.send();
  }

  showRefusals(lines) {
    for (const line of lines) this.refusals.appendChild(el("div", "pj-refusal", line));
    while (this.refusals.childElementCount > 5) this.refusals.firstChild.remove();
  }

  levelsOf(item) {
    return (this.data.levels || {})[item.scale] || [];
  }

  buildAhead() {
    // the cards of the next items, built now that the frame is drawn; those no longer queued are dropped
    const ahead = this.items.slice(1, BUILT_AHEAD + 1); // the first is on screen already
    for (const item of ahead) if (!this.cards.has(item.token)) this.cards.set(item.token, makeCard(item));
    const wanted = new Set(ahead.map((item) => item.token));
    for (const token of this.cards.keys()) if (!wanted.has(token)) this.cards.delete(token);
  }

  done(item) {
    // the server's count when it sent the item, plus the labels given here that it has not acknowledged yet
    const given = this.pending.filter((a) => a.action === "label" && a.package === item.package).length;
    return Math.min(item.total, item.done + given);
  }

  draw() {
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
    this.buttons.hidden = this.actions.hidden = this.note.hidden = !item;
    this.progress.hidden = !item;
    if (!item) {
      // nothing of the last item stays in the DOM, hidden or not
      this.slot.replaceChildren();
      this.progressText.replaceChildren();
      this.buttons.replaceChildren();
      this.buttonsFor = undefined;
      this.root.dataset.shown = "";
      return;
    }
    const done = this.done(item);
    const line = progressLine(item, done);
    if (this.progressText.textContent !== line) this.progressText.textContent = line;
    this.barFill.style.width = `${item.total ? (100 * done) / item.total : 0}%`;
    if (this.root.dataset.shown !== item.token) {
      const card = this.cards.get(item.token) || makeCard(item);
      this.cards.delete(item.token);
      this.slot.replaceChildren(card);
      this.note.value = "";
      this.root.dataset.shown = item.token;
    }
    const buttonsFor = `${item.scale} ${JSON.stringify(this.levelsOf(item))}`;
    if (this.buttonsFor !== buttonsFor) {
      this.drawButtons(item);
      this.buttonsFor = buttonsFor;
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
    this.keyHandled = performance.now(); // until here the press waited for the page's main thread
    if (level) this.answer("label", level.grade);
    else if (actions[key] && item) actions[key]();
    else if (commands[key]) this.command(commands[key]);
    else return;
    this.taken.add(event.code);
    event.preventDefault();
    event.stopPropagation();
  }

  answer(action, grade) {
    const item = this.items[0];
    if (!item || this.busy !== null) return;
    const started = this.keyTime ?? performance.now();
    const handled = this.keyHandled ?? started;
    this.keyTime = this.keyHandled = undefined;
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
      package: item.package,
    });
    this.items.shift();
    this.shownAt = performance.now();
    this.draw();
    // a queue run dry: the press is timed until the server's next items (or its word that none are left)
    if (this.items.length) recordLatency(started, handled);
    else this.awaiting = { started, handled };
    afterPaint(() => {
      // one message at a time: answers given meanwhile ride on the next one, so a burst of keys costs the
      // server (and this page) one run per reply rather than one interrupted run per key
      if (!this.inFlight) this.send();
      this.buildAhead();
    });
  }

  command(name) {
    if (this.busy !== null) return;
    const head = this.items[0];
    this.serial += 1;
    this.busy = this.serial;
    this.items = [];
    this.draw();
    this.pendingCommand = { name, serial: this.busy, shown: head ? head.assignment_id : null };
    this.send();
  }

  send() {
    // the server carries out a command once (its serial): sending it again until it is done is safe
    this.inFlight = true;
    this.lastSend = performance.now();
    const answers = this.pending.map(({ describe, package: _package, ...answer }) => answer);
    this.setState("answers", { sent: ++this.serial, answers, command: this.pendingCommand });
  }

  resendIfStuck() {
    const waiting = this.pending.length || this.pendingCommand !== null;
    if (waiting && performance.now() - this.lastSend > RESEND_MS) this.send();
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey, true);
    window.removeEventListener("keyup", this.onKeyUp, true);
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
