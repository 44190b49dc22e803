// The ladder (`/api/ladder`): every finished run's champion beside hosted anchors on one Elo
// scale per board, rules, pie setting and depth, with 95% intervals, and each player's
// rating over time. The server plays the games in the background; this page polls.

import { request } from "./api.js";
import { ratingChart } from "./charts.js";
import { flash, fmtNum, fmtPct, fmtTime, h, shortId } from "./util.js";

const POLL_MS = 5000;

export async function mount(view, params) {
  let stopped = false;
  let timer = null;
  let chart = null;
  const query = params.query || new URLSearchParams();
  const chosen = { board: query.get("board") || "6,4", rules: query.get("rules") || "standard", pie: query.get("pie") === "true" };

  const picker = h("select", { id: "ladder-pick", "aria-label": "Ladder" });
  const summary = h("p.hint", { id: "ladder-summary" });
  const table = h("div", { id: "ladder-table" }, h("p.muted", "Loading…"));
  const chartEl = h("div.chart", { id: "ladder-chart" });
  const chartCard = h("section.card", { hidden: true }, h("h2", "Ratings over time"), h("p.hint", "Each player's rating as the ladder's games came in; its interval narrows as it plays."), chartEl);
  view.append(
    h(
      "section.card",
      h("div.card-head", h("h1", "Ladder"), h("label", "Ladder ", picker)),
      h("p.hint", "Every finished run's champion and the hosted anchors, rated on one Elo scale. The server plays colour-swapped pairs between them in the background, at a fixed depth and a small share of the cores, always the pairing that narrows the intervals most, and fits Bradley-Terry ratings with 95% intervals. Plain minimax at the ladder's depth is rated 0."),
      summary,
      table,
    ),
    chartCard,
  );
  document.title = "Ladder · kalah-tuner";

  const key = (l) => `${l.board}|${l.rules}|${l.pie}`;
  async function loadLadders() {
    try {
      const { ladders } = await request("GET", "ladders");
      const seen = new Map();
      for (const l of ladders) seen.set(key(l), l);
      const options = [...seen.values()];
      if (!options.some((l) => key(l) === key(chosen))) options.unshift({ ...chosen });
      picker.replaceChildren(
        ...options.map((l) => h("option", { value: key(l), selected: key(l) === key(chosen) }, `${l.board} ${l.rules}${l.pie ? " pie" : ""}`)),
      );
    } catch (e) {
      flash(`Could not list the ladders: ${e.message}`, "error");
    }
  }
  picker.addEventListener("change", () => {
    const [board, rules, pie] = picker.value.split("|");
    location.hash = `#/ladder?board=${encodeURIComponent(board)}&rules=${encodeURIComponent(rules)}&pie=${pie}`;
  });

  const interval = (p) => (p.elo == null ? "–" : `${fmtNum(p.elo, 0)} [${fmtNum(p.low, 0)}, ${fmtNum(p.high, 0)}]`);
  const nameCell = (p) =>
    p.run_id ? h("a", { href: `#/runs/${encodeURIComponent(p.run_id)}` }, p.name) : h("code", p.name);

  function render(ladder) {
    summary.textContent = ladder.id
      ? `${ladder.pits} pits, ${ladder.seeds} seeds, ${ladder.rules} rules${ladder.pie ? ", pie rule" : ""}, every game at depth ${ladder.depth}. ${fmtNum(ladder.trials, 0)} pairs played. Reference: ${ladder.reference}. Games stop once every interval is within ±${ladder.settled_margin} Elo.`
      : `No run has finished on ${ladder.pits},${ladder.seeds} ${ladder.rules}${ladder.pie ? " with the pie rule" : ""} yet: a run's champion enters the ladder when the run finishes.`;
    if (!ladder.players.length) {
      table.replaceChildren(h("p.empty", "No players yet."));
      chartCard.hidden = true;
      return;
    }
    table.replaceChildren(
      h(
        "div.table-scroll",
        { tabIndex: 0, role: "region", "aria-label": "Ladder standings" },
        h(
          "table.runs.responsive",
          h("thead", h("tr", ["Rank", "Player", "Kind", "Owner", "Elo [95% interval]", "Pairs", "Score", "Entered", ""].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            ladder.players.map((p) =>
              h(
                "tr",
                { dataset: { player: p.id, kind: p.kind, withdrawn: String(p.withdrawn) }, class: p.withdrawn ? "muted" : null },
                h("td", { dataset: { label: "Rank" } }, p.rank == null ? (p.withdrawn ? "withdrawn" : "–") : String(p.rank)),
                h("td", { dataset: { label: "Player" } }, nameCell(p)),
                h("td", { dataset: { label: "Kind" } }, p.kind),
                h("td", { dataset: { label: "Owner" } }, p.owner || "–"),
                h("td.elo", { dataset: { label: "Elo" } }, interval(p)),
                h("td", { dataset: { label: "Pairs" } }, fmtNum(p.trials, 0)),
                h("td", { dataset: { label: "Score" } }, fmtPct(p.score)),
                h("td", { dataset: { label: "Entered" } }, fmtTime(p.entered_at)),
                h("td", p.withdrawn || p.kind !== "champion" ? "" : h("button.small", { type: "button", onclick: () => withdraw(p) }, "Withdraw")),
              ),
            ),
          ),
        ),
      ),
    );
    const lines = ladder.players
      .filter((p) => !p.withdrawn)
      .map((p) => ({ label: p.name, points: ladder.history.filter((x) => x.player === p.id) }))
      .filter((l) => l.points.length);
    chartCard.hidden = !lines.length;
    if (lines.length) {
      if (chart) chart.destroy();
      chartEl.replaceChildren();
      chart = ratingChart(chartEl, lines);
    }
  }

  async function withdraw(p) {
    if (!confirm(`Withdraw ${p.name} from the ladder? It plays no more games; its rating stays as it is.`)) return;
    try {
      await request("POST", `ladder/players/${encodeURIComponent(p.id)}/withdraw`);
      flash(`${p.name} withdrawn`, "ok");
      refresh(false);
    } catch (e) {
      flash(`Could not withdraw ${p.name}: ${e.message}`, "error");
    }
  }

  let lastShown = "";
  async function refresh(again = true) {
    try {
      const q = new URLSearchParams({ board: chosen.board, rules: chosen.rules, pie: String(chosen.pie) });
      const ladder = await request("GET", `ladder?${q}`);
      if (stopped) return;
      // Redrawn only when something changed: the chart keeps its zoom between polls.
      const shown = JSON.stringify([ladder.players.map((p) => [p.id, p.elo, p.margin, p.withdrawn]), ladder.history.length]);
      if (shown !== lastShown) {
        lastShown = shown;
        render(ladder);
      }
    } catch (e) {
      if (!stopped) table.replaceChildren(h("p.form-error", `Could not load the ladder: ${e.message}`));
    }
    if (!stopped && again) timer = setTimeout(refresh, POLL_MS);
  }
  await loadLadders();
  refresh();

  return () => {
    stopped = true;
    clearTimeout(timer);
    if (chart) chart.destroy();
  };
}

/** A run's standing on its ladder, for the run page: null when its champion is on none. */
export async function standing(runId) {
  try {
    const ladder = await request("GET", `ladder?run=${encodeURIComponent(runId)}`);
    const me = ladder.players.find((p) => p.run_id === runId);
    if (!me) return null;
    const ranked = ladder.players.filter((p) => p.rank != null).length;
    return { ladder, me, ranked, short: shortId(runId) };
  } catch {
    return null;
  }
}
