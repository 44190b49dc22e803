// Tournament page: pick agents, games and seed; the server plays every pair in the background
// and the page polls until the cross-table is done.

import { api } from "./api.js";
import { agentHelp, catalogue, choices, parseSpec } from "./agents.js";
import { flash, fmtPct, h } from "./util.js";

const POLL_MS = 1000;

export async function mount(view, { query }) {
  const cat = await catalogue();
  const list = choices(cat);
  let timer = null;
  let stopped = false;

  const defaults = new Set(["random", "greedy", "minimax:4", "pekar"]);
  const boxes = list.map((c, i) =>
    h(
      "label.check",
      { title: c.title || null },
      h("input", { type: "checkbox", value: String(i), checked: defaults.has(c.label) }),
      " ",
      c.label,
      c.group === "Exported runs" ? h("span.muted.small", " (export)") : null,
    ),
  );
  const custom = h("textarea", { id: "tour-custom", rows: 2, placeholder: "more agents, one spec a line: minimax:6, heuristic:abrams3:0.5,0.4,0.3:4, {\"kind\":\"greedy\"}" });
  const games = h("input", { id: "tour-games", type: "number", min: 2, step: 2, value: query.get("games") || 20 });
  const seed = h("input", { id: "tour-seed", type: "number", min: 0, value: 1 });
  const startBtn = h("button.primary", { type: "submit", id: "tour-start" }, "Start tournament");
  const bar = h("div.bar-fill");
  const progress = h("div.bar.big", { hidden: true }, bar);
  const statusLine = h("p.muted", { id: "tour-status" });
  const result = h("div", { id: "tour-result" });

  view.append(
    h(
      "section.card",
      h("h1", "Tournament"),
      h(
        "form",
        { onsubmit: start, novalidate: true },
        h("h2", "Agents"),
        h("div.check-grid", boxes),
        h("label", { for: "tour-custom" }, "Other agents"),
        custom,
        h("div.controls-row", h("label.field", h("span.label", "Games a pair"), games), h("label.field", h("span.label", "Seed"), seed)),
        h("p.hint", "Every pair plays this many games in colour-swapped pairs from the same start."),
        h("div.actions", startBtn),
      ),
      agentHelp(cat),
    ),
    h("section.card", h("h2", "Results"), progress, statusLine, result),
  );

  async function start(e) {
    e.preventDefault();
    const agents = [];
    for (const b of boxes) {
      const cb = b.querySelector("input");
      if (cb.checked) agents.push(list[Number(cb.value)].spec);
    }
    try {
      for (const line of custom.value.split("\n")) if (line.trim()) agents.push(parseSpec(line));
    } catch (err) {
      flash(`Other agents: ${err.message}`, "error");
      return;
    }
    if (agents.length < 2) {
      flash("Pick at least two agents.", "error");
      return;
    }
    clearTimeout(timer);
    startBtn.disabled = true;
    result.replaceChildren();
    try {
      const t = await api.tournament({ agents, games: Number(games.value), seed: Number(seed.value) });
      statusLine.textContent = "Running…";
      progress.hidden = false;
      bar.style.width = "0%";
      poll(t.id);
    } catch (err) {
      startBtn.disabled = false;
      flash(err.field ? `${err.field}: ${err.message}` : err.message, "error");
    }
  }

  async function poll(id) {
    if (stopped) return;
    let t;
    try {
      t = await api.tournamentStatus(id);
    } catch (err) {
      flash(err.message, "error");
      startBtn.disabled = false;
      return;
    }
    if (stopped) return;
    bar.style.width = `${((t.progress ?? 0) * 100).toFixed(1)}%`;
    if (t.status === "running") {
      statusLine.textContent = `Running… ${fmtPct(t.progress ?? 0, 0)}`;
      timer = setTimeout(() => poll(id), POLL_MS);
      return;
    }
    startBtn.disabled = false;
    progress.hidden = true;
    if (t.status === "failed") {
      statusLine.textContent = `Failed: ${t.error || "unknown error"}`;
      return;
    }
    statusLine.textContent = "Done.";
    renderTable(t);
  }

  function renderTable(t) {
    const labels = t.agents || [];
    const table = t.table || [];
    const n = labels.length;
    // Row i, column j: i moving first against j (table[i][j]), and i moving second against j
    // (1 minus j's score moving first against i).
    const cell = (i, j) => {
      if (i === j && !table[i]?.[j]) return h("td.diag", "—");
      const first = table[i]?.[j];
      const back = table[j]?.[i];
      const f = first ? first.first_player_score : null;
      const s = back ? 1 - back.first_player_score : null;
      const mean = f != null && s != null ? (f + s) / 2 : f ?? s;
      return h(
        "td.num.score",
        { style: { "--score": mean ?? 0.5 }, title: `${labels[i]} vs ${labels[j]}: ${first ? first.games : 0} games moving first, ${back ? back.games : 0} moving second` },
        h("div", h("span.small.muted", "1st "), fmtPct(f, 0)),
        h("div", h("span.small.muted", "2nd "), fmtPct(s, 0)),
      );
    };
    const scores = t.scores || [];
    const scoreText = (s) => {
      if (s == null) return "–";
      if (typeof s === "number") return fmtPct(s);
      const ci = s.ci_low != null && s.ci_high != null ? ` [${fmtPct(s.ci_low, 0)}, ${fmtPct(s.ci_high, 0)}]` : "";
      return `${fmtPct(s.score)}${ci}`;
    };
    const eloText = (s) => (s && s.elo != null ? `${s.elo >= 0 ? "+" : ""}${Math.round(s.elo)}` : "–");
    result.replaceChildren(
      h("p.hint", "Score (a win 1, a draw ½) of the row agent against the column agent, moving first and moving second; the last columns are each agent's score over all its games, with a 95% interval, and its Elo."),
      h(
        "div.table-scroll",
        h(
          "table.cross",
          { id: "cross-table" },
          h("thead", h("tr", h("th", "row vs column"), labels.map((l) => h("th", l)), h("th.num", "score [95%]"), h("th.num", "Elo"))),
          h(
            "tbody",
            labels.map((l, i) =>
              h("tr", h("th", l), Array.from({ length: n }, (_, j) => cell(i, j)), h("td.num", scoreText(scores[i])), h("td.num", eloText(scores[i]))),
            ),
          ),
        ),
      ),
    );
  }

  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
