// SPRT tests and matches (`/api/sprt-tests`, `/api/matches`): a test of agent A against agent
// B plays colour-swapped pairs in the background until its log-likelihood ratio leaves the
// bounds that elo0, elo1, alpha and beta give; this page starts one, draws its LLR live
// between the bounds with the pentanomial counts and the Elo estimate, and stops it. A plain
// match of a fixed number of games is played while the page waits.

import { api, request } from "./api.js";
import { catalogue, choices } from "./agents.js";
import { llrChart } from "./charts.js";
import { flash, fmtNum, fmtTime, h, shortId, statusBadge } from "./util.js";

const POLL_MS = 500;
const VERDICTS = {
  accept_h1: "H1 accepted: A is stronger by elo1 or more",
  accept_h0: "H0 accepted: A is not stronger by elo1",
  inconclusive: "no verdict yet",
};

const sprtApi = {
  list: () => request("GET", "sprt-tests"),
  get: (id) => request("GET", `sprt-tests/${encodeURIComponent(id)}`),
  start: (body) => request("POST", "sprt-tests", body),
  cancel: (id) => request("POST", `sprt-tests/${encodeURIComponent(id)}/cancel`, {}),
  match: (body) => request("POST", "matches", body, { timeoutMs: 120000 }),
};

/** Pairs a test plays between two looks at its LLR (the server's batch). */
const BATCH_PAIRS = 64;

export async function mount(view, { query }) {
  let stopped = false;
  let timer = null;
  const opened = query.get("id");
  if (opened) return mountTest(view, opened);

  // ---- the form ----
  const listId = "sprt-agent-choices";
  const datalist = h("datalist", { id: listId });
  catalogue()
    .then((cat) => datalist.replaceChildren(...choices(cat).map((c) => h("option", { value: c.spec }, c.label))))
    .catch(() => {});
  const field = (id, label, input, hint) =>
    h("div.field", h("label", { for: id }, label), input, hint ? h("div.hint", hint) : null, h("div.field-error", { id: `err-${id}` }));
  const aInput = h("input", { id: "sprt-a", type: "text", list: listId, value: query.get("a") || "greedy", required: true });
  const bInput = h("input", { id: "sprt-b", type: "text", list: listId, value: query.get("b") || "random", required: true });
  const mode = h(
    "select",
    { id: "sprt-mode" },
    h("option", { value: "sprt" }, "SPRT: play until the test decides"),
    h("option", { value: "match" }, "Match: a fixed number of games"),
  );
  const elo0 = h("input", { id: "sprt-elo0", type: "number", step: "any", value: "0" });
  const elo1 = h("input", { id: "sprt-elo1", type: "number", step: "any", value: "10" });
  const alpha = h("input", { id: "sprt-alpha", type: "number", step: "0.01", min: "0.001", max: "0.5", value: "0.05" });
  const beta = h("input", { id: "sprt-beta", type: "number", step: "0.01", min: "0.001", max: "0.5", value: "0.05" });
  const maxPairs = h("input", { id: "sprt-max-pairs", type: "number", min: 1, max: 2000, value: "1000" });
  const games = h("input", { id: "sprt-games", type: "number", min: 1, max: 200, value: "20" });
  const seed = h("input", { id: "sprt-seed", type: "number", min: 0, value: "1" });
  const sprtFields = h(
    "div.form-grid",
    field("sprt-elo0", "elo0", elo0, "H0: A is this much stronger"),
    field("sprt-elo1", "elo1", elo1, "H1: A is this much stronger (above elo0)"),
    field("sprt-alpha", "alpha", alpha, "chance of accepting H1 when H0 holds"),
    field("sprt-beta", "beta", beta, "chance of accepting H0 when H1 holds"),
    field("sprt-max-pairs", "Most pairs", maxPairs, "1 to 2000; inconclusive if reached"),
  );
  const matchFields = h("div.form-grid", { hidden: true }, field("sprt-games", "Games", games, "1 to 200, colour-swapped pairs"));
  mode.addEventListener("change", () => {
    sprtFields.hidden = mode.value !== "sprt";
    matchFields.hidden = mode.value !== "match";
  });
  const startBtn = h("button.primary", { type: "submit", id: "sprt-start" }, "Start");
  const result = h("div", { id: "match-result", "aria-live": "polite" });
  const form = h(
    "form.config",
    { novalidate: true, onsubmit: submit },
    datalist,
    h("div.form-grid", field("sprt-a", "Agent A (under test)", aInput, "a spec such as minimax:4, or pick one"), field("sprt-b", "Agent B", bInput), field("sprt-mode", "Kind", mode), field("sprt-seed", "Seed", seed)),
    sprtFields,
    matchFields,
    h("div.actions", startBtn),
  );
  const list = h("div", { id: "sprt-list" }, h("p.muted", "Loading…"));
  view.append(
    h(
      "section.card",
      h("h1", "SPRT tests and matches"),
      h(
        "p.hint",
        "An SPRT (sequential probability ratio test) plays pairs of games, each agent South once, until it can say with the error rates asked whether A is at least elo1 stronger than B (H1) or not more than elo0 (H0). Tests play in the background on the server that started them and are stored in the database: every server on it lists them, shows them live and can stop them.",
      ),
      form,
      result,
    ),
    h("section.card", h("h2", "SPRT tests"), list),
  );

  async function refreshList() {
    try {
      const { tests } = await sprtApi.list();
      if (stopped) return;
      list.replaceChildren(
        tests.length
          ? h(
              "table.runs.responsive",
              h("thead", h("tr", ["Test", "Status", "Verdict", "Pairs", "LLR", "Started"].map((t) => h("th", { scope: "col" }, t)))),
              h(
                "tbody",
                tests.map((t) =>
                  h(
                    "tr",
                    h("td", { dataset: { label: "Test" } }, h("a", { href: `#/sprt?id=${encodeURIComponent(t.id)}` }, t.name || `${t.a} vs ${t.b}`)),
                    h("td", { dataset: { label: "Status" } }, statusBadge(t.status)),
                    h("td", { dataset: { label: "Verdict" } }, verdictText(t)),
                    h("td", { dataset: { label: "Pairs" } }, `${t.report.pairs} / ${t.max_pairs}`),
                    h("td", { dataset: { label: "LLR" } }, fmtNum(t.report.llr, 2)),
                    h("td", { dataset: { label: "Started" } }, fmtTime(t.created_at)),
                  ),
                ),
              ),
            )
          : h("p.empty", "No SPRT tests yet."),
      );
      if (tests.some((t) => t.status === "running")) timer = setTimeout(refreshList, 2000);
    } catch (e) {
      if (!stopped) list.replaceChildren(h("p.form-error", `Could not load the tests: ${e.message}`));
    }
  }
  refreshList();

  async function submit(e) {
    e.preventDefault();
    for (const err of form.querySelectorAll(".field-error")) err.textContent = "";
    const a = aInput.value.trim();
    const b = bInput.value.trim();
    const num = (input) => Number(input.value);
    startBtn.disabled = true;
    try {
      if (mode.value === "sprt") {
        const t = await sprtApi.start({
          a,
          b,
          sprt: { elo0: num(elo0), elo1: num(elo1), alpha: num(alpha), beta: num(beta) },
          max_pairs: num(maxPairs),
          seed: num(seed),
        });
        location.hash = `#/sprt?id=${encodeURIComponent(t.id)}`;
      } else {
        result.replaceChildren(h("p.muted", "Playing…"));
        const m = await sprtApi.match({ south: a, north: b, games: num(games), seed: num(seed) });
        result.replaceChildren(matchSummary(m));
      }
    } catch (err) {
      result.replaceChildren();
      const key = { a: "sprt-a", south: "sprt-a", b: "sprt-b", north: "sprt-b", max_pairs: "sprt-max-pairs", games: "sprt-games", seed: "sprt-seed" }[(err.field || "").split(/[.[]/)[0]];
      const box = (key && form.querySelector(`#err-${key}`)) || (err.field === "sprt" && form.querySelector("#err-sprt-elo1"));
      if (box) box.textContent = err.message;
      flash(err.message, "error");
    } finally {
      startBtn.disabled = false;
    }
  }

  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function verdictText(t) {
  if (t.status === "cancelled") return "stopped before a verdict";
  if (t.status === "failed") return "failed";
  return VERDICTS[t.report.verdict] || t.report.verdict;
}

function matchSummary(m) {
  const s = m.summary || {};
  const a = s.a_score || {};
  return h(
    "div.match-summary",
    h("h2", "Match result"),
    h(
      "dl.stats",
      h("dt", "Games"),
      h("dd", String((m.games || []).length)),
      h("dt", "A's score"),
      h("dd", `${fmtNum(100 * (m.score ?? 0), 1)}%`),
      a.elo != null ? [h("dt", "Elo of A"), h("dd", `${fmtNum(a.elo, 0)} [${fmtNum(a.elo_low, 0)}, ${fmtNum(a.elo_high, 0)}]`)] : null,
    ),
  );
}

/** One test's page: live while it plays. */
async function mountTest(view, id) {
  let stopped = false;
  let timer = null;
  let chart = null;
  const title = h("h1", `SPRT test ${shortId(id)}`);
  const badge = h("span");
  const verdict = h("p.verdict", { id: "sprt-verdict", "aria-live": "polite" });
  const stats = h("dl.stats", { id: "sprt-stats" });
  const counts = h("table.counts", { id: "sprt-counts" });
  const chartEl = h("div.chart", { id: "chart-llr" });
  const cancelBtn = h("button.danger", { type: "button", id: "sprt-cancel", hidden: true, onclick: cancel }, "Stop test");
  view.append(
    h(
      "section.card",
      h("div.title-line", title, badge),
      h("p", h("a", { href: "#/sprt" }, "All SPRT tests and matches")),
      verdict,
      h("div.actions", cancelBtn),
      stats,
    ),
    h("section.card", h("h2", "Log-likelihood ratio"), h("p.hint", "The test ends when the LLR leaves its bounds: above the upper one H1 is accepted, below the lower one H0."), chartEl),
    h("section.card", h("h2", "Pairs by A's points (pentanomial)"), counts),
  );

  async function load() {
    let t;
    try {
      t = await sprtApi.get(id);
    } catch (e) {
      if (stopped) return;
      if (e.status === 404) {
        view.replaceChildren(
          h(
            "section.card",
            h("h1", "No such SPRT test"),
            h("p", `No SPRT test ${id} in this server's database: it was never started here, or the link is mistyped. Tests are stored with the runs and outlive restarts.`),
            h("a.button", { href: "#/sprt" }, "Back to the tests"),
          ),
        );
        return;
      }
      flash(`Could not load the test: ${e.message}`, "error");
      timer = setTimeout(load, 2000);
      return;
    }
    if (stopped) return;
    render(t);
    if (t.status === "running") timer = setTimeout(load, POLL_MS);
  }

  function render(t) {
    const r = t.report;
    title.textContent = t.name || `SPRT: ${t.a} vs ${t.b}`;
    document.title = `${title.textContent} · kalah-tuner`;
    badge.replaceChildren(statusBadge(t.status));
    verdict.textContent = t.status === "running" ? `Playing: ${VERDICTS[r.verdict]}.` : `${verdictText(t)}${t.status === "finished" && r.verdict === "inconclusive" ? " (the most pairs were played)" : ""}.`;
    verdict.dataset.verdict = r.verdict;
    cancelBtn.hidden = t.status !== "running";
    const e = r.estimate || {};
    const rows = [
      ["Agent A", t.a],
      ["Agent B", t.b],
      ["Hypotheses", `elo0 ${r.sprt.elo0}, elo1 ${r.sprt.elo1}, alpha ${r.sprt.alpha}, beta ${r.sprt.beta}`],
      ["LLR", `${fmtNum(r.llr, 3)} (bounds ${fmtNum(r.lower_bound, 3)}, ${fmtNum(r.upper_bound, 3)})`],
      // The report counts whole batches of 64 pairs; the games of the batch under way show
      // that the test plays before its LLR moves.
      ["Pairs", `${r.pairs.toLocaleString("en-US")} of at most ${t.max_pairs.toLocaleString("en-US")} (${(t.games_played ?? r.games).toLocaleString("en-US")} games played${t.status === "running" && (t.games_played ?? 0) > r.games ? `; the LLR moves when the batch of ${BATCH_PAIRS} pairs under way ends` : ""})`],
      ["Score of A", e.score != null ? `${fmtNum(100 * e.score, 1)}% [${fmtNum(100 * e.ci_low, 1)}, ${fmtNum(100 * e.ci_high, 1)}]` : "–"],
      ["Elo of A", e.elo != null && Number.isFinite(e.elo) ? `${fmtNum(e.elo, 1)} [${fmtNum(e.elo_low, 1)}, ${fmtNum(e.elo_high, 1)}] (95%)` : "–"],
      ["Started", fmtTime(t.created_at)],
      ["Ended", t.finished_at ? fmtTime(t.finished_at) : "–"],
    ];
    if (t.error) rows.push(["Error", t.error]);
    stats.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", k), h("dd", { dataset: { stat: k } }, v)]));
    const c = r.counts?.counts || [0, 0, 0, 0, 0];
    counts.replaceChildren(
      h("caption", "Colour-swapped pairs by the points A scored in the pair"),
      h("thead", h("tr", ["0", "½", "1", "1½", "2"].map((p) => h("th", { scope: "col" }, p)))),
      h("tbody", h("tr", c.map((n) => h("td", String(n))))),
    );
    if (!chart) chart = llrChart(chartEl, r.lower_bound, r.upper_bound);
    chart.set(t.history || []);
  }

  async function cancel() {
    cancelBtn.disabled = true;
    try {
      render(await sprtApi.cancel(id));
      flash("Test stopped.", "ok");
    } catch (e) {
      flash(`Could not stop the test: ${e.message}`, "error");
      load();
    } finally {
      cancelBtn.disabled = false;
    }
  }

  await load();
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (chart) chart.destroy();
  };
}
