// Chapter 03's interactive walk: the reader picks a token of the Nimbus question and the page
// shows that token's whole equation, softmax(Q K^T / √d_k) V, with every number filled in.
//
// Every number comes from 03-05-token-walks.js, which the chapter program writes next to its
// figures (attn::walk_page_data): the strings it printed, the weights' colours on the book's
// 0..1 scale. This file only lays them out; it computes and rounds nothing. Each step follows
// the order of the program's `--token NAME` output, number for number, and the browser test
// (tests/scripts/token_walk_page.cmake) holds the two together.
//
// Plain DOM, no framework, nothing fetched: the page works from file://. Without JavaScript
// the widget stays hidden and the static walk for "export" below it is the text.
(function () {
  "use strict";

  const root = document.getElementById("token-walk");
  const data = window.attnTokenWalks;
  if (!root || !data || !Array.isArray(data.walks) || data.walks.length === 0) return;

  // el("td", {class: "x"}, "text", child, ...): an element with attributes and children;
  // strings become text nodes, so nothing in the data is parsed as HTML.
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const tok = (name) => el("span", { class: "tw-tok" }, name);
  const num = (text) => el("span", { class: "tw-num" }, text);
  const sub = (text) => el("sub", {}, text);
  const sup = (...parts) => el("sup", {}, ...parts);
  const named = (letter, name) => [letter, "(", tok(name), ")"];  // Q(export)

  // A weight on the book's colour scale: a cell painted as the heatmaps paint it.
  function weightCell(weight) {
    return el("td", { class: "tw-num tw-cell", style: `background:${weight.colour};color:${weight.ink}` },
              weight.text);
  }
  // A weight as a bar on a fixed 0..1 track, in the weight's colour, its value beside it.
  function weightBar(weight) {
    const width = Math.max(0, Math.min(1, weight.value)) * 100;
    return el("span", { class: "tw-track", "aria-hidden": "true" },
              el("span", { class: "tw-bar", style: `width:${width}%;background:${weight.colour}` }));
  }

  function step(number, title, ...body) {
    return el("section", { class: "tw-step", "data-step": String(number) },
              el("h4", {}, typeof number === "number" ? `Step ${number}: ${title}` : title), ...body);
  }

  function project(w) {
    const [x0, x1] = w.x;
    const [[a, b], [c, d]] = w.w_q;  // W_Q, row by row
    return step(1, "project the token three ways",
      el("p", {}, named("x", w.token), " = [", num(x0), ", ", num(x1), "]"),
      el("p", {}, named("Q", w.token), " = ", named("x", w.token), " W", sub("Q"), " = [",
         num(x0), " × ", num(a), " + ", num(x1), " × ", num(c), ", ",
         num(x0), " × ", num(b), " + ", num(x1), " × ", num(d), "] = [",
         el("strong", {}, num(w.q[0]), ", ", num(w.q[1])), "]"),
      el("p", {}, named("K", w.token), " = ", named("x", w.token), " W", sub("K"), " = ", num(w.k),
         el("span", { class: "tw-gap" }), named("V", w.token), " = ", named("x", w.token), " W",
         sub("V"), " = ", num(w.v)));
  }

  function score(w) {
    const rows = w.keys.map((k) =>
      el("tr", {},
         el("td", {}, named("Q", w.token), " · ", named("K", k.token), " / ", w.root),
         el("td", {}, "= (", num(w.q[0]), " × ", num(k.k[0]), " + ", num(w.q[1]), " × ",
            num(k.k[1]), ") / ", num(w.root_value)),
         el("td", { class: "tw-num tw-result" }, "= ", k.score)));
    return step(2, "score every key",
      el("p", {}, "How well ", tok(w.token), "'s query matches each key, scaled by 1/", w.root, ":"),
      el("table", { class: "tw-table" }, el("tbody", {}, rows)));
  }

  function softmax(w) {
    const rows = w.keys.map((k) =>
      el("tr", {},
         el("td", {}, "weight(", tok(k.token), ")"),
         el("td", {}, "= e", sup(num(k.shifted)), " / ", num(w.exp_sum)),
         el("td", { class: "tw-num tw-result" }, "= ", k.weight.text),
         el("td", { class: "tw-bar-cell" }, weightBar(k.weight))));
    return step(3, "softmax the scores into weights",
      el("p", {}, "weight(j) = e", sup("score(j) − ", num(w.top)), " / Σ", sub("k"), " e",
         sup("score(k) − ", num(w.top)), ", where Σ", sub("k"), " = ", num(w.exp_sum)),
      el("table", { class: "tw-table" }, el("tbody", {}, rows)),
      el("p", { class: "tw-sum" }, "Σ weights = ", el("strong", { class: "tw-num" }, w.weight_sum)));
  }

  function blend(w) {
    const rows = w.keys.map((k, j) =>
      el("tr", {},
         el("td", { class: "tw-op" }, j ? "+" : ""),
         el("td", { class: "tw-num" }, k.weight.text),
         el("td", {}, "× ", num(k.value)),
         el("td", {}, named("V", k.token))));
    rows.push(el("tr", { class: "tw-total" },
                 el("td", { class: "tw-op" }, "="),
                 el("td", { colspan: "3" }, named("out", w.token), " = ", el("strong", { class: "tw-num" }, w.output))));
    return step(4, "blend the values",
      el("p", {}, named("out", w.token), " = Σ", sub("j"), " weight(j) ", named("V", "j"), ":"),
      el("table", { class: "tw-table" }, el("tbody", {}, rows)));
  }

  function beside(w) {
    const row = (label, cells) => el("tr", {}, el("th", { scope: "row" }, label), cells);
    return step("raw", "Beside chapter 02: the same row without projections",
      el("p", {}, "In chapter 02, ", named("x", w.token),
         " was query, key and value itself. Every number changes; compare which keys win."),
      // One tbody for all rows: the theme makes each tbody its own box, which would part a
      // thead's columns from the body's.
      el("table", { class: "tw-table tw-compare" },
         el("tbody", {},
            el("tr", {}, el("td", {}), w.keys.map((k) => el("th", { scope: "col" }, tok(k.token)))),
            row("raw score", w.keys.map((k) => el("td", { class: "tw-num" }, k.raw_score))),
            row("score", w.keys.map((k) => el("td", { class: "tw-num" }, k.score))),
            row("raw weight", w.keys.map((k) => weightCell(k.raw_weight))),
            row("weight", w.keys.map((k) => weightCell(k.weight))))));
  }

  function legend() {
    const stops = data.palette.map(([at, colour]) => `${colour} ${at * 100}%`).join(", ");
    return el("p", { class: "tw-legend" }, "weight 0 ",
              el("span", { class: "tw-legend-bar", style: `background:linear-gradient(to right, ${stops})` }),
              " 1, the colour scale of every weight figure in the book");
  }

  // The page: the sentence, one button per token, the chosen token's steps.
  const buttons = data.walks.map((w) =>
    el("button", { type: "button", class: "tw-choice", "aria-pressed": "false", "data-token": w.token }, w.token));
  const group = el("div", { class: "tw-choices", role: "group", "aria-label": "The token whose equation runs" },
                   buttons);
  const status = el("p", { class: "tw-status", "aria-live": "polite" });
  const steps = el("div", { class: "tw-steps" });
  root.replaceChildren(
    el("p", { class: "tw-sentence" }, "“", data.sentence, "”: choose a token"),
    group, status, legend(), steps);

  const byName = new Map(data.walks.map((w) => [w.token, w]));
  const fallback = root.dataset.defaultToken;

  // Shows the walk of token `name`; a name that is not a token of the sentence (from a link)
  // is said so, with the valid ones, and the default token's walk is shown instead.
  function choose(name, { updateLink }) {
    const known = byName.has(name);
    const walk = known ? byName.get(name) : byName.get(fallback) || data.walks[0];
    for (const button of buttons) button.setAttribute("aria-pressed", String(button.dataset.token === walk.token));
    if (known) status.replaceChildren("The equation for ", tok(walk.token), ", step by step.");
    else status.replaceChildren(`“${name}” is not a token of the sentence (the tokens are `,
                                [...byName.keys()].join(", "), "), so here is ", tok(walk.token), ".");
    steps.replaceChildren(project(walk), score(walk), softmax(walk), blend(walk), beside(walk));
    if (updateLink) history.replaceState(null, "", `#token=${encodeURIComponent(walk.token)}`);
  }

  // `#token=fail` in the address chooses "fail": links can point at any token's walk.
  function tokenInLink() {
    const match = /^#token=(.*)$/.exec(window.location.hash);
    if (!match) return null;
    try { return decodeURIComponent(match[1]); } catch (e) { return null; }
  }

  group.addEventListener("click", (event) => {
    const button = event.target.closest("button.tw-choice");
    if (button) choose(button.dataset.token, { updateLink: true });
  });
  // Left and right arrows move between the tokens, as in any toolbar.
  group.addEventListener("keydown", (event) => {
    const at = buttons.indexOf(document.activeElement);
    if (at < 0 || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return;
    const next = buttons[(at + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
    next.focus();
    choose(next.dataset.token, { updateLink: true });
    event.preventDefault();
  });
  window.addEventListener("hashchange", () => {
    const name = tokenInLink();
    if (name !== null) choose(name, { updateLink: false });
  });

  root.hidden = false;
  for (const node of document.querySelectorAll(".token-walk-static")) node.hidden = true;
  const linked = tokenInLink();
  choose(linked !== null ? linked : fallback, { updateLink: false });
  // A link to a token's walk shows the walk: scroll to it once the page has its final layout,
  // after MathJax (which the book's pages load) has typeset the formulas above it.
  if (linked !== null) {
    const reveal = () => root.scrollIntoView({ block: "start" });
    window.addEventListener("load", () => {
      if (window.MathJax && window.MathJax.Hub) window.MathJax.Hub.Queue(reveal);
      else reveal();
    });
  }
})();
