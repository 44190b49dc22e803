// Tournament page: pick agents, games and seed; the server plays every pair in the background
// and the page polls until the cross-table is done.

import { api } from "./api.js";
import { agentHelp, catalogue, choices, parseSpec } from "./agents.js";
import { flash, fmtNum, fmtPct, fmtTime, h } from "./util.js";

const POLL_MS = 1000;
/** Longest display name a spec gets before it is cut short. */
const NAME_CHARS = 28;

/** A spec as a short display name: its text, cut short. */
function shorten(spec) {
  const text = typeof spec === "string" ? spec : JSON.stringify(spec);
  return text.length > NAME_CHARS ? `${text.slice(0, NAME_CHARS - 1)}…` : text;
}

/** The name a catalogue choice shows: a run's name (not its status line), else its label. */
function displayName(choice) {
  if (choice.group === "Exported runs") return shorten(choice.label.replace(/ \(.*\)$/, ""));
  return shorten(choice.label);
}

/**
 * An API error as one message that names the agent at fault by its display name instead of
 * its index in the request (which counts the ticked boxes too). The server's message already
 * starts with its field, so the field is not repeated.
 */
function agentError(err, names) {
  const message = err.message || String(err);
  const m = /^agents\[(\d+)\](\.[\w.]+)?: (.*)$/s.exec(message);
  if (!m || names[Number(m[1])] == null) return message;
  const name = names[Number(m[1])];
  // The server's text may start with the spec, which is the name of an unnamed agent.
  const rest = m[3].startsWith(`${name}: `) ? m[3].slice(name.length + 2) : m[3];
  return `${name}${m[2] || ""}: ${rest}`;
}

const LAST_KEY = "kalah-tuner.tournament";

function remember(id) {
  try {
    localStorage.setItem(LAST_KEY, id);
  } catch {
    // Private browsing: the page then forgets it.
  }
}

function recalled() {
  try {
    return localStorage.getItem(LAST_KEY) || "";
  } catch {
    return "";
  }
}

export async function mount(view, { query }) {
  const cat = await catalogue();
  const list = choices(cat);
  let timer = null;
  let stopped = false;

  const defaults = new Set(["random", "greedy", "minimax:4", "pekar"]);
  const boxes = list.map((c, i) =>
    h(
      "label.check",
      // A long run name shows two lines; the whole of it is in the title.
      { title: c.title || (c.label.length > 60 ? c.label : null) },
      h("input", { type: "checkbox", value: String(i), checked: defaults.has(c.label) }),
      " ",
      h("span.agent-name", c.label),
      c.group === "Exported runs" ? h("span.muted.small", " (export)") : null,
    ),
  );
  // With many runs the list is long: a filter keeps the boxes that match, and the ticked ones.
  const filter = h("input", { id: "tour-filter", type: "search", placeholder: "filter the agents…", "aria-label": "filter the agents" });
  filter.addEventListener("input", () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const b of boxes) {
      const text = b.textContent.toLowerCase();
      b.hidden = !b.querySelector("input").checked && !words.every((w) => text.includes(w));
    }
  });
  const custom = h("textarea", { id: "tour-custom", rows: 2, placeholder: "more agents, one spec a line, a name first if you like: minimax:6, deep = minimax:8, {\"kind\":\"greedy\"}" });
  const games = h("input", { id: "tour-games", type: "number", min: 2, step: 2, value: query.get("games") || 20 });
  const seed = h("input", { id: "tour-seed", type: "number", min: 0, value: 1 });
  // An SPRT for every pairing: "elo0,elo1" (or with alpha and beta); games is then its cap.
  const sprtInput = h("input", { id: "tour-sprt", type: "text", placeholder: "none, or 0,10", size: 10 });
  const startBtn = h("button.primary", { type: "submit", id: "tour-start" }, "Start tournament");
  const bar = h("div.bar-fill");
  const progress = h("div.bar.big", { hidden: true }, bar);
  const statusLine = h("p.muted", { id: "tour-status" });
  // The tournament under way, which the Cancel button stops.
  let current = null;
  const cancelBtn = h(
    "button",
    {
      type: "button",
      id: "tour-cancel",
      hidden: true,
      onclick: async () => {
        if (!current) return;
        cancelBtn.disabled = true;
        try {
          await api.cancelTournament(current);
        } catch (err) {
          flash(err.message, "error");
        }
        cancelBtn.disabled = false;
      },
    },
    "Cancel",
  );
  const result = h("div", { id: "tour-result" });
  const pastList = h("ul.past", { id: "tour-past" });

  /** The status the last poll read, to reload the list when it changes. */
  let lastStatus = null;

  async function loadPast() {
    try {
      const { tournaments } = await api.tournaments();
      if (stopped) return;
      pastList.replaceChildren(
        ...tournaments.map((t) =>
          h(
            "li",
            h("a", { href: `#/tournament?id=${encodeURIComponent(t.id)}` }, (t.names || t.agents || []).map(shorten).join(", ")),
            h("span.muted.small", ` · ${t.status} · ${t.games} games a pair · seed ${t.seed} · ${fmtTime(t.created_at)}`),
          ),
        ),
      );
      if (!tournaments.length) pastList.replaceChildren(h("li.muted", "None yet."));
    } catch (err) {
      pastList.replaceChildren(h("li.muted", `Could not load them: ${err.message}`));
    }
  }

  view.append(
    h(
      "section.card",
      h("h1", "Tournament"),
      h(
        "form",
        { onsubmit: start, novalidate: true },
        h("h2", "Agents"),
        filter,
        h("div.check-grid", boxes),
        h("label", { for: "tour-custom" }, "Other agents"),
        custom,
        h("div.controls-row", h("label.field", h("span.label", "Games a pair"), games), h("label.field", h("span.label", "Seed"), seed), h("label.field", h("span.label", "SPRT (elo0,elo1)"), sprtInput)),
        h("p.hint", "Every pair plays this many games in colour-swapped pairs from the same start; with an SPRT, pairs until its test decides, this many games at most. Single tests of two agents, watched live: ", h("a", { href: "#/sprt" }, "SPRT"), "."),
        h("div.actions", startBtn),
      ),
      agentHelp(cat),
    ),
    h("section.card", h("h2", "Results"), progress, statusLine, h("div.actions", cancelBtn), result),
    h("section.card", h("h2", "Past tournaments"), h("p.hint", "Kept by the server; open one to see its table again."), pastList),
  );

  // The display names of the agents of the tournament under way, in the request's order.
  let names = [];

  async function start(e) {
    e.preventDefault();
    const agents = [];
    const wanted = [];
    for (const b of boxes) {
      const cb = b.querySelector("input");
      if (cb.checked) {
        const choice = list[Number(cb.value)];
        agents.push(choice.spec);
        wanted.push(displayName(choice));
      }
    }
    const lines = custom.value.split("\n").map((l) => l.trim()).filter(Boolean);
    for (const [k, line] of lines.entries()) {
      // "name = spec" names an agent; a spec alone is named by its text.
      const named = line.match(/^([^={}"]+?)\s*=\s*(\S.*)$/);
      try {
        agents.push(parseSpec(named ? named[2] : line));
      } catch (err) {
        flash(`Other agents, line ${k + 1}: ${err.message}`, "error");
        return;
      }
      wanted.push(named ? named[1].trim() : shorten(line));
    }
    if (agents.length < 2) {
      flash("Pick at least two agents.", "error");
      return;
    }
    const n = Number(games.value);
    if (!Number.isInteger(n) || n < 2 || n % 2 === 1) {
      flash(`Games a pair: give an even number (games come in colour-swapped pairs), got ${games.value || "nothing"}.`, "error");
      return;
    }
    clearTimeout(timer);
    startBtn.disabled = true;
    try {
      const body = { agents, names: wanted, games: n, seed: Number(seed.value) };
      if (sprtInput.value.trim()) body.sprt = sprtInput.value.trim();
      const t = await api.tournament(body);
      // The previous table stays until this start has succeeded.
      names = wanted;
      result.replaceChildren();
      statusLine.textContent = "Running…";
      progress.hidden = false;
      bar.style.width = "0%";
      remember(t.id);
      poll(t.id);
      // The list shows it while it runs.
      loadPast();
    } catch (err) {
      startBtn.disabled = false;
      statusLine.textContent = "Not started: see the message above. The table below is the last tournament's.";
      flash(agentError(err, wanted), "error");
    }
  }

  async function poll(id, { onlyRunning = false } = {}) {
    if (stopped) return;
    let t;
    try {
      t = await api.tournamentStatus(id);
    } catch (err) {
      if (stopped) return;
      if (onlyRunning) return;
      if (err.status === 404) {
        statusLine.textContent = `Not found: there is no tournament ${id} on this server.`;
        startBtn.disabled = false;
        return;
      }
      if (current === id) {
        // Running when last seen: the server may be back in a moment.
        statusLine.textContent = `Could not read its progress (${err.message}); trying again…`;
        timer = setTimeout(() => poll(id), POLL_MS * 3);
        return;
      }
      flash(err.message, "error");
      startBtn.disabled = false;
      return;
    }
    if (stopped) return;
    // The list of past tournaments shows each one's status: when this one's changes (queued
    // to running, say), the list is read again rather than left saying what it was.
    if (t.status !== lastStatus) {
      if (lastStatus !== null && !["cancelled", "finished"].includes(t.status)) loadPast();
      lastStatus = t.status;
    }
    // Returning to the page resumes only a tournament still under way (queued for the
    // tournaments' share of the cores, or playing).
    const underWay = t.status === "running" || t.status === "queued";
    if (onlyRunning && !underWay) return;
    if (underWay) {
      progress.hidden = false;
      startBtn.disabled = true;
    }
    bar.style.width = `${((t.progress ?? 0) * 100).toFixed(1)}%`;
    if (underWay) {
      statusLine.textContent = t.status === "queued"
        ? "Queued: waiting for the tournaments' share of the cores…"
        : `Running… ${fmtPct(t.progress ?? 0, 0)}`;
      current = id;
      cancelBtn.hidden = false;
      timer = setTimeout(() => poll(id), POLL_MS);
      return;
    }
    current = null;
    cancelBtn.hidden = true;
    startBtn.disabled = false;
    progress.hidden = true;
    if (t.status === "cancelled") {
      statusLine.textContent = "Cancelled: the games under way finished, the rest were not played.";
      loadPast();
      return;
    }
    if (t.status === "failed") {
      statusLine.textContent = `Failed: ${t.error || "unknown error"}`;
      return;
    }
    statusLine.textContent = "Done.";
    renderTable(t);
    loadPast();
  }

  function renderTable(t) {
    const specs = t.agents || [];
    const labels = specs.map((spec, i) => shorten(t.names?.[i] || names[i] || spec));
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
      h("p.hint", "Each agent's score (a win 1, a draw ½) over all its games, with a 95% interval, and its Elo; then its score against each column agent, moving first and moving second."),
      h(
        "div.table-scroll",
        { tabIndex: 0, role: "region", "aria-label": "Cross-table" },
        h(
          "table.cross",
          { id: "cross-table" },
          // Score and Elo first: with many agents the pair cells scroll sideways, the totals not.
          h("thead", h("tr", h("th", "row vs column"), h("th.num", "score [95%]"), h("th.num", "Elo"), labels.map((l, i) => h("th", { title: specs[i] }, l)))),
          h(
            "tbody",
            labels.map((l, i) =>
              h("tr", h("th", { title: specs[i] }, l), h("td.num.total", scoreText(scores[i])), h("td.num.total", eloText(scores[i])), Array.from({ length: n }, (_, j) => cell(i, j))),
            ),
          ),
        ),
      ),
      // replaceChildren writes a null as the text "null": no SPRT, no table and nothing else.
      ...(t.sprt ? [sprtTable(t.sprt, labels)] : []),
    );
  }

  // Each pairing's SPRT: verdict, pairs, LLR against its bounds, pentanomial counts, Elo.
  function sprtTable(sprt, labels) {
    const verdicts = { accept_h1: "H1: stronger", accept_h0: "H0: not stronger", inconclusive: "inconclusive" };
    const test = sprt.test || {};
    return h(
      "div",
      { id: "tour-sprt-results" },
      h("h3", "SPRT of each pairing"),
      h("p.hint", `elo0 ${test.elo0}, elo1 ${test.elo1}, alpha ${test.alpha}, beta ${test.beta}: a pairing ends when its LLR leaves [${fmtNum(sprt.lower_bound, 2)}, ${fmtNum(sprt.upper_bound, 2)}], or after ${sprt.max_pairs} pairs.`),
      h(
        "div.table-scroll",
        { tabIndex: 0, role: "region", "aria-label": "SPRT of each pairing" },
        h(
          "table.sprt",
          h("thead", h("tr", ["A", "B", "Verdict", "Pairs", "LLR", "Pairs by A's points (0, ½, 1, 1½, 2)", "Elo of A"].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            (sprt.pairings || []).map((p) =>
              h(
                "tr",
                h("td", labels[p.a] ?? p.a),
                h("td", labels[p.b] ?? p.b),
                h("td", { dataset: { verdict: p.verdict } }, verdicts[p.verdict] || p.verdict),
                h("td.num", String(p.pairs)),
                h("td.num", fmtNum(p.llr, 2)),
                h("td.num", (p.counts?.counts || []).join(", ")),
                h("td.num", p.estimate && Number.isFinite(p.estimate.elo) ? `${p.estimate.elo >= 0 ? "+" : ""}${Math.round(p.estimate.elo)}` : "–"),
              ),
            ),
          ),
        ),
      ),
    );
  }

  loadPast();
  // A stored tournament to reopen: #/tournament?id=ID; else the one this browser started last,
  // if it still runs (its progress and Cancel come back).
  const opened = query.get("id");
  if (opened) {
    statusLine.textContent = "Loading…";
    poll(opened);
  } else if (recalled()) {
    poll(recalled(), { onlyRunning: true });
  }

  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
