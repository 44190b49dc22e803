// Run page: status, live fitness / diversity / weight charts fed by the run's event stream,
// the population of any generation as a sortable table, and the export.

import { api } from "./api.js";
import { agreementChart, dataButtons, diversityChart, fitnessChart, linkZoom, logToggle, panelChart, setStepUnit, weightsChart } from "./charts.js";
import * as live from "./live.js";
import { standing } from "./ladder.js";
import { clearFlash, flash, fmtDuration, fmtNum, fmtTime, h, shortId, isLearner, statusBadge, TUNER_NAMES } from "./util.js";

const TERMINAL = new Set(["finished", "cancelled", "failed"]);
const POLL_MS = 2000;
/** How often a run page checks that its server still answers. */
const HEALTH_MS = 3000;

export async function mount(view, { id }) {
  let run;
  try {
    run = await api.run(id);
  } catch (e) {
    if (e.status !== 404) throw e;
    // A page of its own rather than an empty one under a red banner.
    view.append(
      h(
        "section.card",
        { id: "run-not-found" },
        h("h1", "No such run"),
        h("p", "There is no run ", h("code", id), " on this server: it may have been deleted, or the link is wrong."),
        h("a.button", { href: "#/runs" }, "Back to the runs"),
      ),
    );
    return null;
  }
  const features = run.features || [];
  // TD, TD-Leaf and Texel runs: checkpoints of one player, not generations of a population.
  const learning = isLearner(run.tuner);
  // What the run's steps are called on its page: "generation" or "checkpoint".
  const step = learning ? "checkpoint" : "generation";
  const Step = learning ? "Checkpoint" : "Generation";
  let lastGen = -1;
  let lastWallMs = [];
  let pollTimer = null;
  let tickTimer = null;
  let stopped = false;
  let catchingUp = null;
  let catchUpAgain = false;

  // ---- header ----------------------------------------------------------------------------
  const title = h("h1");
  const sub = h("p.muted.small");
  const badge = h("span");
  const bar = h("div.bar-fill");
  const barWrap = h("div.bar.big", bar);
  const stats = h("dl.stats");
  // Where the run's champion stands on its ladder, once the run has finished.
  const standingEl = h("p.hint", { id: "ladder-standing", hidden: true });
  let standingAsked = 0;
  async function showStanding() {
    if (Date.now() - standingAsked < 10000) return;
    standingAsked = Date.now();
    const s = await standing(id);
    // Not entered or not rated yet: the ladder takes it within seconds of the finish.
    const again = () => setTimeout(() => standingEl.isConnected && showStanding(), 10000);
    if (!s || s.me.elo == null) again();
    if (!s) return;
    const { ladder, me, ranked } = s;
    const where = `${ladder.pits},${ladder.seeds} ${ladder.rules}${ladder.pie ? " pie" : ""}, depth ${ladder.depth}`;
    const q = new URLSearchParams({ board: `${ladder.pits},${ladder.seeds}`, rules: ladder.rules, pie: String(ladder.pie) });
    standingEl.replaceChildren(
      "Ladder: ",
      me.withdrawn
        ? "withdrawn"
        : me.elo == null
          ? "entered, not yet rated"
          : `${me.rank ?? "–"} of ${ranked}, ${Math.round(me.elo)} Elo [${Math.round(me.low)}, ${Math.round(me.high)}] after ${me.trials} pairs`,
      ` on the ${where} ladder (0 = ${ladder.reference}) · `,
      h("a", { href: `#/ladder?${q}` }, "see the ladder"),
    );
    standingEl.hidden = false;
  }
  const errBox = h("p.error-text", { hidden: true });
  const queueNote = h("p.notice", { id: "queue-note", hidden: true });
  const deletedNote = h("p.notice", { id: "run-deleted", hidden: true, role: "status" }, "This run was deleted: it no longer runs, and its data is gone from the server. ", h("a", { href: "#/runs" }, "Back to the runs"));
  const cancelBtn = h("button", { id: "run-cancel", onclick: () => act(cancelBtn, "Run cancelled.", () => api.cancelRun(id)) }, "Cancel");
  const resumeBtn = h("button", { id: "run-resume", onclick: () => act(resumeBtn, "Run queued again.", () => api.resumeRun(id)) }, "Resume");
  const deleteBtn = h("button.danger", {
    onclick: async () => {
      if (!confirm("Delete this run and all its generations?")) return;
      try {
        await api.deleteRun(id);
        flash("Run deleted.", "ok");
        location.hash = "#/runs";
      } catch (e) {
        flash(e.message, "error");
      }
    },
  }, "Delete");
  const exportLink = h("a.button.primary", { id: "export-download", href: api.exportUrl(id), download: `kalah-tuner-${id}.json` }, "Export JSON");
  const viewExportBtn = h("button", { id: "export-view", onclick: showExport }, "View export");
  const playLink = h("a.button", { href: `#/play?run=${encodeURIComponent(id)}` }, "Play against it");
  const liveDot = h("span.live-dot", { title: "live updates", hidden: true });
  const connLost = h("span.conn-lost.small", { id: "conn-lost", hidden: true, role: "status" }, "connection lost, reconnecting…");

  // ---- charts and tables -------------------------------------------------------------------
  const panelAgents = (run.config?.benchmark?.panel || []).map(specLabel);
  const panelEl = h("div.chart", { id: "chart-panel" });
  const agreementPositions = run.config?.benchmark?.agreement || 0;
  const agreementEl = h("div.chart", { id: "chart-agreement" });
  const agreementTools = h("span.chart-tools");
  const panelInfo = h("p.muted.small", { id: "panel-info" });
  const fitEl = h("div.chart", { id: "chart-fitness" });
  const divEl = h("div.chart", { id: "chart-diversity" });
  const wEl = h("div.chart", { id: "chart-weights" });
  const bestTable = h("table.compact");
  const genInput = h("input", { id: "pop-gen", type: "number", min: 0, step: 1, inputmode: "numeric" });
  const followBox = h("input", { type: "checkbox", id: "pop-follow", checked: true });
  const popInfo = h("p.muted.small", { id: "population-info" });
  const popTable = h("table.population.sortable");
  const popWrap = h("div.table-scroll", { tabIndex: 0, role: "region", "aria-label": "Population of the generation" }, popTable);
  const exportBox = h("pre.export", { id: "export-json", hidden: true });
  const genCount = h("span.muted", { id: "gen-count" });
  const [panelTools, fitTools, divTools, wTools] = [0, 1, 2, 3].map(() => h("span.chart-tools"));
  const featurePicker = h("details.feature-picker", { id: "feature-picker" });

  // ---- what the user says about the run, and its config ---------------------------------------
  const tagList = h("span.tags", { id: "run-tags" });
  const notesText = h("p.notes", { id: "run-notes" });
  const editBtn = h("button", { id: "run-edit", type: "button", onclick: () => openEditor() }, "Edit name, notes and tags");
  const nameField = h("input", { id: "edit-name", type: "text", maxlength: 200 });
  // The server's limits, said before Save: 20 tags of 40 characters (the field holds them all
  // with their commas), and a tag past 40 is named as it is typed.
  const TAG_CHARS = 40;
  const tagsHint = h("span.hint", { id: "edit-tags-hint" }, `Up to 20 tags of at most ${TAG_CHARS} characters each: letters, digits, spaces and - _ . :`);
  const tagsField = h("input", {
    id: "edit-tags",
    type: "text",
    placeholder: "baseline, depth 4",
    maxlength: 20 * TAG_CHARS + 19 * 2,
    "aria-describedby": "edit-tags-hint",
    oninput: () => {
      const long = tagsField.value.split(",").map((t) => t.trim()).find((t) => t.length > TAG_CHARS);
      const message = long ? `"${long.slice(0, 20)}…" has ${long.length} characters; a tag has at most ${TAG_CHARS}` : "";
      tagsField.setCustomValidity(message);
      tagsHint.textContent = message || `Up to 20 tags of at most ${TAG_CHARS} characters each: letters, digits, spaces and - _ . :`;
      tagsHint.classList.toggle("error-text", !!message);
    },
  });
  const notesField = h("textarea", { id: "edit-notes", rows: 3, maxlength: 10000 });
  const editor = h(
    "form.editor",
    {
      id: "run-editor",
      hidden: true,
      onsubmit: (e) => (e.preventDefault(), saveDescription()),
      // Escape closes the editor without saving, and the focus goes back to its button.
      onkeydown: (e) => {
        if (e.key !== "Escape") return;
        e.preventDefault();
        editor.hidden = true;
        editBtn.focus();
      },
    },
    h("label", "Name ", nameField),
    h("label", "Tags (comma-separated) ", tagsField, tagsHint),
    h("label", "Notes ", notesField),
    h("div.actions", h("button.primary", { type: "submit", id: "edit-save" }, "Save"), h("button", { type: "button", onclick: () => (editor.hidden = true) }, "Close")),
  );
  const configJson = h("pre.export", { id: "run-config" });
  const fromConfig = h("a.button", { id: "run-copy", href: `#/new?from=${encodeURIComponent(id)}` }, "New run from this config");
  const configBox = h("details.config", { id: "run-config-box" }, h("summary", "Config"), configJson, fromConfig);

  function openEditor() {
    nameField.value = run.name || "";
    tagsField.value = (run.tags || []).join(", ");
    tagsField.dispatchEvent(new Event("input"));
    notesField.value = run.notes || "";
    editor.hidden = false;
    nameField.focus();
  }

  async function saveDescription() {
    const tags = tagsField.value.split(",").map((t) => t.trim()).filter(Boolean);
    try {
      run = await api.describeRun(id, { name: nameField.value, notes: notesField.value, tags });
      renderRun(run);
      editor.hidden = true;
      flash("Saved.", "ok");
    } catch (e) {
      flash(e.message, "error");
    }
  }

  // (DOM append writes null as the text "null": optional cards are filtered out.)
  appendAll(
    view,
    h(
      "section.card",
      h("div.card-head", h("div", h("div.title-line", title, badge, liveDot, connLost), sub), h("div.actions", exportLink, viewExportBtn, playLink, cancelBtn, resumeBtn, deleteBtn)),
      barWrap,
      queueNote,
      deletedNote,
      stats,
      standingEl,
      h("div.describe", tagList, notesText, editBtn),
      editor,
      configBox,
      errBox,
      exportBox,
    ),
    panelAgents.length
      ? h(
          "section.card",
          h("div.card-head", h("h2", "Benchmark panel"), panelInfo, panelTools),
          h("p.hint", `Elo of each measured generation's leader against the fixed panel (${panelAgents.join(", ")}) on openings fitness never uses, with its 95% band; the dashed line is the champion, the player Export and "Play against it" hand out. A rising curve means the run really gets stronger. Per-agent lines are hidden at first: click a name in the legend to show or hide its line.`),
          panelEl,
        )
      : h("section.card", h("h2", "Benchmark panel"), h("p.hint", "This run has no benchmark panel (benchmark.panel is empty), so only relative fitness is shown.")),
    agreementPositions
      ? h(
          "section.card",
          h("div.card-head", h("h2", "Perfect-move agreement"), agreementTools),
          h("p.hint", `Share of ${agreementPositions} solved positions from real games where each measured generation's leader makes a perfect move, with its 95% band (the exact solver's answer: benchmark.agreement). The panel's text above also gives the seeds it loses a move against perfect play.`),
          agreementEl,
        )
      : null,
    h(
      "section.card",
      h("div.card-head", h("h2", "Fitness"), genCount, fitTools),
      learning
        ? h("p.hint", { id: "fitness-hint" }, "The fitness of each checkpoint's weights: a learning run has one player a checkpoint, so best, mean and min coincide; the panel curve above is the measure of its progress. Drag to zoom (every chart of the run follows), double-click to reset, click to show that checkpoint's weights. Click a name in the legend to hide or show its line.")
        : h("p.hint", { id: "fitness-hint" }, "Relative to the population: best, mean and min of each generation, the band is mean ± one standard deviation, the dashed line the hall of fame. Drag to zoom (every chart of the run follows), double-click to reset, click to show that generation's population. Click a name in the legend to hide or show its line."),
      fitEl,
    ),
    h(
      "div.grid-2",
      // One player a checkpoint has no diversity: a learning run's chart would be all zeros.
      h("section.card", { id: "diversity-card", hidden: learning }, h("div.card-head", h("h2", "Diversity"), divTools), divEl),
      h("section.card", h("h2", "Champion's weights"), h("p.hint", "Of the run's champion: the player Export, \"Play against it\" and run:ID hand out."), h("div.table-scroll", { tabIndex: 0, role: "region", "aria-label": "Champion's weights" }, bestTable)),
    ),
    h(
      "section.card",
      h("div.card-head", h("h2", learning ? "Weights at each checkpoint" : "Weights of each generation's best"), wTools),
      featurePicker,
      wEl,
    ),
    h(
      "section.card",
      h(
        "div.card-head",
        h("h2", learning ? "Weights of a checkpoint" : "Population"),
        h(
          "div.inline-form",
          h("label", { for: "pop-gen" }, learning ? "Checkpoint " : "Generation "),
          genInput,
          h("label.inline", followBox, " follow the latest"),
        ),
      ),
      popInfo,
      popWrap,
    ),
  );

  const pickGeneration = (g) => {
    followBox.checked = false;
    genInput.value = g;
    loadPopulation(g);
    popWrap.scrollIntoView({ behavior: "smooth", block: "nearest" });
  };
  setStepUnit(step);
  const fit = fitnessChart(fitEl, pickGeneration, { learning });
  const div = diversityChart(divEl);
  const wts = weightsChart(wEl, features, pickGeneration);
  const panel = panelAgents.length ? panelChart(panelEl, panelAgents) : null;
  const agreement = agreementPositions ? agreementChart(agreementEl) : null;
  const stem = `kalah-tuner-${shortId(id)}`;
  if (panel) panelTools.append(dataButtons(panel.chart, `${stem}-panel`, "panel-data"));
  if (agreement) agreementTools.append(dataButtons(agreement.chart, `${stem}-agreement`, "agreement-data"));
  fitTools.append(logToggle(fit.chart, "fitness-log"), " ", dataButtons(fit.chart, `${stem}-fitness`, "fitness-data"));
  divTools.append(logToggle(div.chart, "diversity-log"), " ", dataButtons(div.chart, `${stem}-diversity`, "diversity-data"));
  wTools.append(dataButtons(wts.chart, `${stem}-weights`, "weights-data"));
  linkZoom([panel?.chart, agreement?.chart, fit.chart, div.chart, wts.chart].filter(Boolean));
  // With many features the lines tangle: pick the ones to show.
  const featureBoxes = features.map((f, i) =>
    h("label.check", h("input", { type: "checkbox", checked: true, dataset: { feature: f }, onchange: (e) => wts.chart.plot.setSeries(i + 1, { show: e.target.checked }) }), ` ${f}`),
  );
  const setAll = (show) => () => {
    featureBoxes.forEach((label, i) => {
      label.querySelector("input").checked = show;
      wts.chart.plot.setSeries(i + 1, { show });
    });
  };
  featurePicker.append(
    h("summary", "Features shown"),
    h("div.check-grid", featureBoxes),
    h("div.actions", h("button.small", { type: "button", id: "features-all", onclick: setAll(true) }, "All"), h("button.small", { type: "button", id: "features-none", onclick: setAll(false) }, "None")),
  );

  // Typing a generation stops following the latest at once.
  genInput.addEventListener("input", () => {
    followBox.checked = false;
  });
  genInput.addEventListener("change", () => {
    const g = Number(genInput.value);
    if (Number.isInteger(g) && g >= 0) {
      followBox.checked = g >= lastGen;
      loadPopulation(g);
    }
  });
  followBox.addEventListener("change", () => {
    if (followBox.checked && lastGen >= 0) {
      genInput.value = lastGen;
      loadPopulation(lastGen);
    }
  });

  // ---- data ----------------------------------------------------------------------------------
  function append(gens) {
    let added = 0;
    for (const g of gens) {
      if (g.generation <= lastGen) continue; // duplicates from a reconnect or a catch-up
      lastGen = g.generation;
      fit.push(g);
      div.push(g);
      wts.push(g);
      if (panel) panel.push(g);
      if (agreement) agreement.push(g);
      if (g.panel) {
        const o = g.panel.overall;
        const c = g.panel.champion;
        const a = g.panel.agreement;
        const agreementText = a
          ? `; perfect moves ${(100 * a.share).toFixed(1)}% [${(100 * a.share_ci[0]).toFixed(1)}, ${(100 * a.share_ci[1]).toFixed(1)}], ${a.mean_loss.toFixed(3)} seeds lost a move`
          : "";
        panelInfo.textContent = `${step} ${g.generation}: ${learning ? "weights" : "leader"} ${(100 * o.score).toFixed(1)}%, Elo ${fmtElo(o.elo)} [${fmtElo(o.elo_low)}, ${fmtElo(o.elo_high)}]; champion from ${step} ${g.panel.champion_generation}, Elo ${fmtElo(c.elo)}${agreementText}`;
      }
      if (g.wall_ms != null) {
        lastWallMs.push(g.wall_ms);
        if (lastWallMs.length > 20) lastWallMs.shift();
      }
      added++;
    }
    if (!added) return;
    fit.redraw();
    div.redraw();
    wts.redraw();
    if (panel) panel.redraw();
    if (agreement) agreement.redraw();
    genCount.textContent = `${fit.count()} ${learning ? "checkpoints" : "generations"}`;
    genInput.max = lastGen;
    // Not while the user types a generation into the box.
    if (followBox.checked && document.activeElement !== genInput) {
      genInput.value = lastGen;
      loadLatestPopulation();
    }
    renderStats();
  }

  async function catchUp() {
    // One request at a time; a call while one is out asks for one more round after it, since
    // that request may have been answered before what this call was told about was written
    // (a generation event during the page's first fetch would otherwise be lost).
    if (catchingUp) {
      catchUpAgain = true;
      return catchingUp;
    }
    catchingUp = (async () => {
      do {
        catchUpAgain = false;
        try {
          const res = await api.generations(id, lastGen >= 0 ? lastGen : undefined);
          if (!stopped) append(res.generations || []);
          clearFlash("Could not load generations");
        } catch (e) {
          if (e.status === 404 && !stopped) markDeleted();
          else if (!stopped) flash(`Could not load generations: ${e.message}`, "error");
          break;
        }
      } while (catchUpAgain && !stopped && !deleted);
      catchingUp = null;
    })();
    return catchingUp;
  }

  // Events come from the browser's one shared stream (live.js); a run page only listens.
  let unwatch = null;
  let unconn = null;
  let streamOpen = false;
  function connect() {
    if (unwatch) return;
    unwatch = live.watchRun(id, onEvent);
    unconn = live.onConnection(onConnection);
    onConnection(live.connectionState());
  }

  function onEvent(kind, data) {
    if (stopped || deleted) return;
    if (kind === "generation") {
      const g = data;
      if (g.generation > lastGen + 1) catchUp();
      else append([g]);
      // Keep the header's counters in step between status events; the hall of fame's weights
      // come with the run object, fetched at most every two seconds.
      if (g.generation + 1 > (run.generations_done ?? 0)) {
        run.generations_done = g.generation + 1;
        run.progress = run.generations_total ? run.generations_done / run.generations_total : run.progress;
        renderRun(run);
        refreshRun();
      }
    } else if (kind === "status") {
      // A status event may be older than what a fetch already showed: never go back in time.
      if ((data.generations_done ?? 0) < (run.generations_done ?? 0) && !TERMINAL.has(data.status)) return;
      run = data;
      renderRun(run);
      if (TERMINAL.has(run.status)) catchUp();
    } else if (kind === "end") {
      if (data.status === "deleted") markDeleted();
      else {
        refreshRun();
        catchUp();
      }
    }
  }

  function onConnection(state) {
    if (stopped) return;
    const was = streamOpen;
    streamOpen = state === "open";
    showConnection();
    if (streamOpen) {
      stopPolling();
      // Anything written while the stream was down (or before this page listened).
      if (!was) {
        catchUp();
        refreshRun();
      }
    } else if (state === "lost" && !TERMINAL.has(run.status)) {
      // The page keeps up by asking until the stream is back.
      startPolling();
    }
  }

  function showConnection() {
    const down = lost || (!streamOpen && live.connectionState() === "lost");
    connLost.hidden = !down || deleted;
    liveDot.hidden = down || !streamOpen || deleted || TERMINAL.has(run.status);
  }

  // An event stream whose server has gone (stopped, or the network dropped) can sit open
  // without an error for a long time, so the page asks the server itself every few seconds;
  // when it answers again, the stream starts afresh and the page catches up.
  let healthTimer = null;
  let lost = false;
  function watchConnection() {
    healthTimer = setTimeout(async () => {
      if (stopped) return;
      let ok = false;
      try {
        await api.health();
        ok = true;
      } catch {
        ok = false;
      }
      if (stopped) return;
      if (!ok && !lost) {
        lost = true;
        showConnection();
      } else if (ok && lost) {
        lost = false;
        showConnection();
        clearFlash();
        live.reconnect();
        refreshRun();
        catchUp();
      }
      watchConnection();
    }, HEALTH_MS);
  }

  // A run deleted elsewhere: no longer running, nothing more will come.
  let deleted = false;
  function markDeleted() {
    if (deleted) return;
    deleted = true;
    stopPolling();
    badge.replaceChildren(statusBadge("deleted"));
    bar.classList.remove("live");
    cancelBtn.hidden = true;
    resumeBtn.hidden = true;
    deleteBtn.hidden = true;
    deletedNote.hidden = false;
    showConnection();
  }

  const refreshRun = throttle(async () => {
    try {
      const fresh = await api.run(id);
      // A status event may have come in meanwhile; never go back in time.
      if (!stopped && !deleted && (fresh.generations_done ?? 0) >= (run.generations_done ?? 0)) {
        run = fresh;
        renderRun(run);
      }
    } catch (e) {
      if (e.status === 404 && !stopped) markDeleted();
      // Otherwise the next generation event tries again.
    }
  }, 2000);

  function stopPolling() {
    clearTimeout(pollTimer);
    pollTimer = null;
  }

  function startPolling() {
    if (pollTimer || stopped || deleted) return;
    const tick = async () => {
      try {
        const fresh = await api.run(id);
        if (stopped || deleted) return;
        run = fresh;
        renderRun(run);
        await catchUp();
      } catch (e) {
        if (e.status === 404) markDeleted();
        // The connection note says the server is away; no banner on top of it.
      }
      if (!stopped && !deleted && !streamOpen && !TERMINAL.has(run.status)) pollTimer = setTimeout(tick, POLL_MS);
      else pollTimer = null;
    };
    pollTimer = setTimeout(tick, POLL_MS);
  }

  // ---- rendering -----------------------------------------------------------------------------
  function renderRun(r) {
    title.textContent = r.name || `Run ${shortId(r.id)}`;
    title.title = title.textContent;
    // PNG downloads name the run.
    for (const c of [fit, div, wts, panel, agreement]) if (c) c.chart.pngTitle = title.textContent;
    const tuner = TUNER_NAMES[r.tuner] || r.tuner || "GA";
    sub.textContent = `${tuner} · ${r.preset ? `preset ${r.preset}` : "custom config"} · seed ${r.seed}${r.owner ? ` · by ${r.owner}` : ""} · ${r.id}`;
    badge.replaceChildren(statusBadge(r.status));
    if (r.status === "finished") showStanding();
    const p = Math.max(0, Math.min(1, r.progress ?? 0));
    bar.style.width = `${(p * 100).toFixed(1)}%`;
    bar.classList.toggle("live", r.status === "running");
    errBox.hidden = !r.error;
    errBox.textContent = r.error || "";
    renderQueue(r);
    tagList.replaceChildren(...(r.tags || []).map((t) => h("span.tag-chip", t)));
    notesText.textContent = r.notes || "";
    notesText.hidden = !r.notes;
    configJson.textContent = JSON.stringify(r.config, null, 2);
    // Tuners the form does not know (a later server's) cannot be copied into it.
    fromConfig.hidden = !!(r.tuner && !(r.tuner in TUNER_NAMES));
    cancelBtn.hidden = !(r.status === "queued" || r.status === "running");
    resumeBtn.hidden = !(r.status === "cancelled" || r.status === "failed");
    const hasGen = (r.generations_done ?? 0) > 0 || lastGen >= 0;
    exportLink.hidden = !hasGen;
    viewExportBtn.hidden = !hasGen;
    playLink.hidden = !hasGen;
    renderStats();
    renderBest(r);
    showConnection();
  }

  // A queued run has no curves yet: say why, and how many runs go first.
  let queueRequest = 0;
  async function renderQueue(r) {
    const mine = ++queueRequest;
    if (r.status !== "queued") {
      queueNote.hidden = true;
      return;
    }
    queueNote.hidden = false;
    queueNote.textContent = "Queued: this run starts when a worker is free; its charts fill in from its first generation.";
    try {
      const { runs } = await api.runs();
      if (mine !== queueRequest) return;
      const ahead = runs.filter((o) => o.status === "queued" && o.created_at < r.created_at).length;
      const busy = runs.filter((o) => o.status === "running").length;
      queueNote.textContent = `Queued: ${ahead === 0 ? "next in line" : `${ahead} queued run${ahead === 1 ? "" : "s"} ahead of it`}, ${busy} running. Its charts fill in from its first generation.`;
    } catch {
      // The plain note stands.
    }
  }

  function renderStats() {
    const r = run;
    const learning = isLearner(r.tuner);
    // A learning run's records are checkpoints, its fitness the panel score of its weights.
    const items = learning ? [
      ["Tuner", TUNER_NAMES[r.tuner] || r.tuner],
      ["Checkpoints", `${r.generations_done ?? 0} / ${r.generations_total ?? "?"}`],
      ["Champion's panel score", fmtNum(r.best_fitness)],
      // A fitting learner counts its rounds over the games; a self-play one, its games.
      r.config?.rounds != null ? ["Rounds", r.config.rounds] : ["Self-play games", r.config?.games ?? "–"],
      ["Depth (learning / play)", `${r.config?.depth ?? "–"} / ${r.config?.play_depth ?? "–"}`],
    ] : [
      ...(r.tuner && r.tuner !== "ga" ? [["Tuner", TUNER_NAMES[r.tuner] || r.tuner]] : []),
      ["Generations", `${r.generations_done ?? 0} / ${r.generations_total ?? "?"}`],
      ["Champion's fitness", fmtNum(r.best_fitness)],
      ["Population", r.config?.population ?? "–"],
      ["Depth", r.config?.depth ?? "–"],
      ["Started", fmtTime(r.started_at)],
      // A cancelled or failed run did not finish: it ended.
      [r.status === "cancelled" || r.status === "failed" ? "Ended" : "Finished", fmtTime(r.finished_at)],
    ];
    if (r.started_at) {
      const end = r.finished_at ? new Date(r.finished_at) : new Date();
      items.push(["Elapsed", fmtDuration(end - new Date(r.started_at))]);
    }
    // Measured on the run's game threads (and the workers' for its queued games): what a
    // user's quota counts once the run has ended.
    if (r.processor_seconds != null) items.push(["Processor time", fmtDuration(r.processor_seconds * 1000)]);
    if (r.status === "running" && lastWallMs.length) {
      const avg = lastWallMs.reduce((a, b) => a + b, 0) / lastWallMs.length;
      const left = (r.generations_total ?? 0) - (r.generations_done ?? 0);
      items.push(["Time left", `≈ ${fmtDuration(avg * left)}`]);
    }
    if (r.stop_reason) items.push(["Stopped by", r.stop_reason]);
    stats.replaceChildren(...items.map(([k, v]) => h("div", h("dt", k), h("dd", String(v)))));
  }

  let bestKey = "";
  function renderBest(r) {
    const w = r.best_weights;
    const key = JSON.stringify(w);
    if (key === bestKey) return;
    bestKey = key;
    if (!w) {
      bestTable.replaceChildren(h("tr", h("td.muted", `No ${step} yet.`)));
      return;
    }
    bestTable.replaceChildren(
      h("thead", h("tr", h("th", "feature"), h("th.num", "weight"))),
      h("tbody", w.map((x, i) => h("tr", h("td", features[i] ?? `w${i}`), h("td.num", fmtNum(x, 4))))),
    );
  }

  // ---- population ----------------------------------------------------------------------------
  let popRequest = 0;
  let sort = { col: "fitness", dir: -1 };
  let popData = null;
  // Asked for when generations arrive, and run up to 1.5 s later: by then the user may have
  // picked a generation of their own, which it must not replace.
  const loadLatestPopulation = throttle(() => {
    if (followBox.checked) loadPopulation(lastGen);
  }, 1500);

  async function loadPopulation(g) {
    const mine = ++popRequest;
    try {
      const rec = await api.generation(id, g);
      if (mine !== popRequest || stopped) return;
      popData = rec;
      renderPopulation();
    } catch (e) {
      if (mine === popRequest) popInfo.textContent = `${Step} ${g}: ${e.message}`;
    }
  }

  function renderPopulation() {
    const rec = popData;
    const feats = rec.features || features;
    const rows = (rec.individuals || []).map((ind, i) => ({ i, fitness: ind.fitness, weights: ind.weights || [] }));
    const f = rec.fitness || {};
    const took = rec.timing?.wall_ms != null ? ` in ${fmtDuration(rec.timing.wall_ms)}` : "";
    // A checkpoint is one player's weights: no population, so no spread to report.
    popInfo.textContent = learning
      ? `Checkpoint ${rec.generation}: fitness ${fmtNum(f.best)} · ${fmtCount(rec.games_played)} games${took}`
      : `Generation ${rec.generation}: ${rows.length} individuals · best ${fmtNum(f.best)} · mean ${fmtNum(f.mean)} · min ${fmtNum(f.min)} · std ${fmtNum(f.std)} · diversity ${fmtNum(rec.diversity, 4)} · ${fmtCount(rec.games_played)} games${took}`;
    const value = (row, col) => (col === "i" ? row.i : col === "fitness" ? row.fitness : row.weights[col]);
    rows.sort((a, b) => {
      const x = value(a, sort.col);
      const y = value(b, sort.col);
      return (x === y ? a.i - b.i : x < y ? -1 : 1) * (x === y ? 1 : sort.dir);
    });
    // Each header is a button, so the keyboard sorts too; aria-sort says the order.
    const th = (col, label) =>
      h(
        "th.num",
        {
          class: sort.col === col ? (sort.dir > 0 ? "sorted asc" : "sorted desc") : null,
          "aria-sort": sort.col === col ? (sort.dir > 0 ? "ascending" : "descending") : "none",
          dataset: { col: String(col) },
        },
        h(
          "button.sort",
          {
            type: "button",
            title: `sort by ${label}`,
            onclick: () => {
              sort = sort.col === col ? { col, dir: -sort.dir } : { col, dir: col === "i" ? 1 : -1 };
              renderPopulation();
              popTable.querySelector(`th[data-col="${col}"] button`)?.focus();
            },
          },
          label,
        ),
      );
    popTable.replaceChildren(
      h("thead", h("tr", th("i", "#"), th("fitness", "fitness"), feats.map((name, k) => th(k, name)))),
      h(
        "tbody",
        rows.map((row) =>
          h(
            "tr",
            { class: row.i === rec.best_index ? "best" : null },
            h("td.num", row.i),
            h("td.num", fmtNum(row.fitness, 4)),
            row.weights.map((w) => h("td.num", fmtNum(w, 4))),
          ),
        ),
      ),
    );
  }

  // ---- export ----------------------------------------------------------------------------------
  async function showExport() {
    if (!exportBox.hidden) {
      exportBox.hidden = true;
      viewExportBtn.textContent = "View export";
      return;
    }
    try {
      const resp = await fetch(api.exportUrl(id), { headers: { Accept: "application/json" } });
      const text = await resp.text();
      if (!resp.ok) {
        let msg = text;
        try {
          msg = JSON.parse(text).error.message;
        } catch {}
        throw new Error(msg);
      }
      exportBox.textContent = JSON.stringify(JSON.parse(text), null, 2);
      exportBox.hidden = false;
      viewExportBtn.textContent = "Hide export";
    } catch (e) {
      flash(`Export: ${e.message}`, "error");
    }
  }

  async function act(button, msg, fn) {
    // Disabled while the request is out, so that a slow answer is visible as such.
    button.disabled = true;
    try {
      run = await fn();
      renderRun(run);
      flash(msg, "ok");
      if (!TERMINAL.has(run.status)) connect();
    } catch (e) {
      flash(`${button.textContent} failed: ${e.message}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  // ---- start -----------------------------------------------------------------------------------
  renderRun(run);
  await catchUp();
  if (lastGen >= 0) {
    genInput.value = lastGen;
    loadPopulation(lastGen);
  } else {
    popInfo.textContent = `No ${step} yet.`;
  }
  // Finished runs listen too: one may be resumed or deleted elsewhere.
  connect();
  // The elapsed time and ETA move on between generations.
  tickTimer = setInterval(() => run.status === "running" && renderStats(), 1000);

  watchConnection();

  return () => {
    stopped = true;
    clearTimeout(healthTimer);
    if (unwatch) unwatch();
    if (unconn) unconn();
    stopPolling();
    clearInterval(tickTimer);
    fit.destroy();
    div.destroy();
    wts.destroy();
    if (panel) panel.destroy();
    if (agreement) agreement.destroy();
  };
}

function appendAll(parent, ...children) {
  parent.append(...children.filter((c) => c != null && c !== false));
}

function throttle(fn, ms) {
  let last = 0;
  let timer = null;
  return () => {
    const now = Date.now();
    clearTimeout(timer);
    if (now - last >= ms) {
      last = now;
      fn();
    } else {
      timer = setTimeout(() => {
        last = Date.now();
        fn();
      }, ms - (now - last));
    }
  };
}

/** A count of games with its thousands grouped ("?" when unknown). */
function fmtCount(n) {
  return n == null ? "?" : Number(n).toLocaleString("en-US");
}

function fmtElo(e) {
  return e == null ? "–" : `${e >= 0 ? "+" : ""}${e.toFixed(0)}`;
}

// A panel agent as the config holds it (a spec object or string), as text.
function specLabel(spec) {
  if (typeof spec === "string") return spec;
  if (!spec || typeof spec !== "object") return String(spec);
  const { kind, ...rest } = spec;
  if (kind === "heuristic") return `heuristic:${rest.features}:${rest.weights}:${rest.depth}`;
  if (rest.depth != null) return `${kind}:${rest.depth}`;
  return kind;
}
