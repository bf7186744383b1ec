// The Review page's ranked list of one query: every pooled passage with its labels, a cursor and the labels set.
//
// The keys work here, in the browser: J/K move the cursor, 0-3 set the final label of the passage under it,
// X excludes it, U takes back what was set on it; nothing goes to the server until "Apply" sends the labels
// set with their reason, as the component's state ("apply", with a fresh serial so that each send is a change).
// The server checks and stores them in one transaction and answers with the outcome of that serial.
// Drawn as one element: a list of fifty passages drawn as Streamlit elements (a button per key, a box for the
// cursor, a form) made each tab switch re-render the page once per element on a busy machine.
// Untrusted text (queries, passages, titles, names, messages) only ever goes through textContent.
// el() and fillSegments() are the Annotate queue's (annotate_component/frontend/main.js): each component's script
// is served from its own asset folder, and one file per component keeps it a single script with no imports.

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

function labelled(label, segments, className) {
  // "<b>label</b> · text", as the page's other verbatim texts
  const node = el("div", `pj-verbatim ${className || ""}`);
  const body = el("span");
  fillSegments(body, segments);
  node.append(el("b", "", label), document.createTextNode(" · "), body);
  return node;
}

class RankedList {
  constructor(parent) {
    this.parent = parent;
    this.listId = null;
    this.cursor = 0;
    this.chosen = new Map(); // entry id -> value set and not applied yet (a grade, "exclude")
    this.serial = 0;
    this.handled = 0; // the last serial whose outcome was shown
    this.root = el("div", "pj-ranked");
    this.help = el("div", "pj-caption");
    this.buttons = el("div", "pj-actions pj-ranked-keys");
    this.list = el("div", "pj-ranked-list");
    this.pendingLine = el("div", "pj-caption");
    this.reason = el("textarea", "pj-note");
    this.reason.rows = 2;
    this.reason.setAttribute("aria-label", "Reason for the labels you set (required)");
    const reasonLabel = el("label", "pj-caption", "Reason for the labels you set (required)");
    reasonLabel.append(this.reason);
    this.applyButton = el("button", "pj-button", "Apply the labels set");
    this.applyButton.type = "button";
    this.applyButton.addEventListener("click", () => this.apply());
    this.outcome = el("div", "pj-refusal");
    this.outcome.hidden = true;
    this.outcome.setAttribute("role", "alert");
    const form = el("div", "pj-box");
    form.append(this.pendingLine, reasonLabel, this.applyButton);
    this.root.append(this.help, this.buttons, this.list, this.outcome, form);
    parent.appendChild(this.root);
    this.onKey = (event) => this.key(event);
    document.addEventListener("keydown", this.onKey);
  }

  destroy() {
    document.removeEventListener("keydown", this.onKey);
  }

  update(data) {
    this.data = data;
    const result = data.outcome || {};
    if (this.listId === null) {
      // a list mounted again (the tab opened anew) shows no outcome of an apply made before it
      this.handled = Math.max(this.handled, result.serial || 0);
    }
    if (data.list !== this.listId) {
      // another query, pool or order: nothing set on the list before applies to this one
      this.listId = data.list;
      this.cursor = 0;
      this.chosen.clear();
      this.reason.value = "";
      this.outcome.hidden = true;
      this.buildButtons();
    }
    const ids = new Set(data.entries.map((e) => e.id));
    for (const id of [...this.chosen.keys()]) if (!ids.has(id)) this.chosen.delete(id);
    this.cursor = Math.min(this.cursor, Math.max(data.entries.length - 1, 0));
    if (result.serial && result.serial > this.handled) {
      this.handled = result.serial;
      if (result.status === "stored") {
        this.chosen.clear();
        this.reason.value = "";
      }
      this.outcome.textContent = result.message || "";
      this.outcome.classList.toggle("pj-info", result.status === "stored");
      this.outcome.hidden = !result.message;
    }
    this.draw();
  }

  buildButtons() {
    const keys = this.data.keys;
    const actions = [
      [`next ↓ (${keys.next})`, () => this.move(1)],
      [`previous ↑ (${keys.previous})`, () => this.move(-1)],
      ...this.data.grades.map((g) => [`${g}`, () => this.set(g)]),
      [`exclude (${keys.exclude})`, () => this.set("exclude")],
      [`take back (${keys.undo})`, () => this.set("keep")],
    ];
    this.buttons.replaceChildren(
      ...actions.map(([label, run]) => {
        const button = el("button", "pj-button", label);
        button.type = "button";
        button.addEventListener("click", run);
        return button;
      }),
    );
  }

  key(event) {
    if (!this.root.isConnected || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
    const keys = this.data.keys;
    const key = event.key.toLowerCase();
    if (key === keys.next) this.move(1);
    else if (key === keys.previous) this.move(-1);
    else if (key === keys.exclude) this.set("exclude");
    else if (key === keys.undo) this.set("keep");
    else if (this.data.grades.map(String).includes(key)) this.set(Number(key));
    else return;
    event.preventDefault();
  }

  move(step) {
    const size = this.data.entries.length;
    if (!size) return;
    this.cursor = Math.min(Math.max(this.cursor + step, 0), size - 1);
    this.draw();
    this.list.children[this.cursor]?.scrollIntoView({ block: "nearest" });
  }

  set(value) {
    const entry = this.data.entries[this.cursor];
    if (!entry) return;
    if (value === "keep") this.chosen.delete(entry.id);
    else this.chosen.set(entry.id, value);
    this.draw();
  }

  apply() {
    const changes = this.data.entries
      .filter((e) => this.chosen.has(e.id))
      .map((e) => [e.query_id, e.passage_id, this.chosen.get(e.id) === "exclude" ? null : this.chosen.get(e.id)]);
    this.serial = Math.max(this.serial, this.handled) + 1;
    this.setState("apply", { serial: this.serial, list: this.listId, changes, reason: this.reason.value });
  }

  entryCard(entry, index) {
    const card = el("div", "pj-box pj-ranked-entry");
    card.dataset.testid = "ranked-entry";
    if (index === this.cursor) {
      card.classList.add("pj-cursor");
      card.append(el("div", "pj-caption", "▶ the keys set this passage"));
    }
    card.addEventListener("click", () => {
      this.cursor = index;
      this.draw();
    });
    const left = el("div", "pj-ranked-text");
    if (entry.title.length) left.append(labelled(`${entry.where} · ${entry.docid}`, entry.title, "pj-title"));
    else left.append(labelled(entry.where, [[entry.docid, false]], "pj-title"));
    if (entry.passage.length) {
      const passage = el("div", "pj-verbatim");
      fillSegments(passage, entry.passage);
      left.append(passage);
    }
    const right = el("div", "pj-ranked-labels");
    right.append(el("div", "pj-verbatim pj-title", `final: ${entry.final}`));
    right.append(labelled("labels", [[entry.labels, false]], "pj-small"));
    if (this.chosen.has(entry.id)) {
      right.append(labelled("not applied yet", [[`set to: ${this.chosen.get(entry.id)}`, false]], "pj-title"));
    }
    const row = el("div", "pj-ranked-row");
    row.append(left, right);
    card.append(row);
    return card;
  }

  draw() {
    const data = this.data;
    const place = data.entries.length ? `#${this.cursor + 1}` : "none";
    this.help.textContent =
      `Keys: J/K move the cursor (now ${place}), 0-3 set the final label of the passage under it, X excludes it, ` +
      "U takes back what was set on it; then give the reason and apply. The buttons do the same.";
    this.list.replaceChildren(...data.entries.map((entry, index) => this.entryCard(entry, index)));
    const set = data.entries.filter((e) => this.chosen.has(e.id));
    const listed = set.map((e) => `#${e.position}: ${this.chosen.get(e.id)}`).join(", ");
    const count = `${set.length} label${set.length === 1 ? "" : "s"}`;
    this.pendingLine.textContent = `Set and not applied yet: ${count}${set.length ? ` (${listed}).` : "."}`;
  }
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let view = parentElement.__pjRanked;
  if (!view) {
    view = new RankedList(parentElement);
    parentElement.__pjRanked = view;
  }
  view.setState = setStateValue;
  view.update(data);
  return () => {
    view.destroy();
    view.root.remove();
    delete parentElement.__pjRanked;
  };
}
