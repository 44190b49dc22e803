// Play page: a human against an agent, or two agents watched at a chosen speed. Every move
// goes through the API (/api/position for a human's move, /api/move for an agent's), so the
// rules live in one place: the server.

import { api } from "./api.js";
import { agentHelp, agentPicker, catalogue } from "./agents.js";
import { drawBoard, finalScores, legalMoves, parseKpn } from "./board.js";
import { clearFlash, flash, h } from "./util.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SIDE = { south: "South", north: "North" };
// The pie rule's swap, as the API numbers it (no pit can be 16: boards have at most 12).
const SWAP = 16;
/** First pause before a failed agent move is asked for again, and the longest. */
const RETRY_MS = 1000;
const RETRY_MAX_MS = 8000;
const FAILED = "The move could not be fetched";

/** An error worth trying again: no answer, or the server busy or restarting. */
function transient(e) {
  return e.status === 0 || e.status === 429 || e.status === 502 || e.status === 503 || e.status === 504;
}

export async function mount(view, { query }) {
  const cat = await catalogue();
  let stopped = false;
  let gameId = 0; // bumps on every new game, so stale agent replies are dropped

  // ---- controls ---------------------------------------------------------------------------
  const mode = h(
    "select",
    { id: "play-mode" },
    h("option", { value: "human" }, "Play against an agent"),
    h("option", { value: "watch" }, "Watch two agents"),
  );
  if (query.get("mode") === "watch") mode.value = "watch";
  const pitsInput = h("input", { id: "play-pits", type: "number", min: 1, max: 12, value: query.get("pits") || 6 });
  const seedsInput = h("input", { id: "play-seeds", type: "number", min: 1, max: 128, value: query.get("seeds") || 4 });
  const pieInput = h("input", { id: "play-pie", type: "checkbox", checked: query.get("pie") === "1" || query.get("pie") === "true" });
  const seedInput = h("input", { id: "play-seed", type: "number", min: 0, value: 1, title: "breaks ties between equally good moves" });
  const humanSide = h("select", { id: "play-side" }, h("option", { value: "south" }, "South (moves first)"), h("option", { value: "north" }, "North"));
  const runId = query.get("run");
  const opponent = agentPicker(cat, { id: "play-agent", initial: query.get("agent") || "minimax:4", runId });
  const southAgent = agentPicker(cat, { id: "watch-south", initial: "greedy" });
  const northAgent = agentPicker(cat, { id: "watch-north", initial: runId ? null : "minimax:4", runId });
  const speed = h("input", { id: "play-speed", type: "range", min: 0, max: 2000, step: 50, value: 600 });
  const speedLabel = h("span.small.muted");
  const newGameBtn = h("button.primary", { id: "new-game", type: "button", onclick: () => newGame() }, "New game");
  const pauseBtn = h("button", { id: "watch-pause", type: "button", onclick: togglePause }, "Pause");
  const stepBtn = h("button", { id: "watch-step", type: "button", onclick: () => watchStep() }, "Step");
  // Under the pie rule North may, once, take over South's side instead of moving.
  const swapBtn = h(
    "button",
    { id: "swap-button", type: "button", hidden: true, title: "Pie rule: exchange seats with the first mover (you take over South's side as it stands, and they move next)", onclick: () => humanMove(pos.toMove, SWAP) },
    "Swap",
  );

  const humanControls = h(
    "div.controls-row",
    field("You play", humanSide),
    field("Against", opponent.el),
  );
  const watchControls = h(
    "div.controls-row",
    field("South", southAgent.el),
    field("North", northAgent.el),
    field("Delay between moves", h("span.speed", speed, speedLabel)),
    h("div.field.buttons", pauseBtn, stepBtn),
  );

  // ---- board and status ---------------------------------------------------------------------
  const boardEl = h("div.board-wrap", { id: "board" });
  const status = h("p.game-status", { id: "game-status", "aria-live": "polite" });
  const lastMove = h("p.last-move", { id: "last-move" });
  const log = h("ol.move-log", { id: "move-log" });

  view.append(
    h(
      "section.card",
      h("h1", "Play"),
      h(
        "form.play-setup",
        { onsubmit: (e) => (e.preventDefault(), newGame()) },
        h(
          "div.controls-row",
          field("Mode", mode),
          field("Pits a side (m)", pitsInput),
          field("Seeds a pit (n)", seedsInput),
          h("label.field.checkbox", { title: "South's first move earns no extra turn; North may then swap seats instead of moving (the ManKalah engine's game)" }, pieInput, h("span.label", "Pie rule")),
          field("Seed", seedInput),
        ),
        humanControls,
        watchControls,
        h("div.actions", newGameBtn),
      ),
      agentHelp(cat),
    ),
    h("section.card.board-card", status, boardEl, h("div.actions", swapBtn), lastMove),
    h("section.card", h("h2", "Moves"), log),
  );

  // ---- state ------------------------------------------------------------------------------
  let pos = null; // parsed position
  let kpn = "";
  let over = false;
  let ply = 0;
  let busy = false;
  let paused = false;
  let prevPos = null;
  let last = null;
  /** Failed requests for the move now due, in a row. */
  let failures = 0;

  const updateSpeed = () => (speedLabel.textContent = ` ${speed.value} ms`);
  speed.addEventListener("input", updateSpeed);
  updateSpeed();
  const updateMode = () => {
    humanControls.hidden = mode.value !== "human";
    watchControls.hidden = mode.value !== "watch";
  };
  mode.addEventListener("change", () => {
    updateMode();
    newGame();
  });
  updateMode();
  for (const el of [humanSide, pitsInput, seedsInput, pieInput]) el.addEventListener("change", () => newGame());

  function field(label, input) {
    return h("label.field", h("span.label", label), input);
  }

  function labels() {
    if (mode.value === "watch") return { south: `South: ${southAgent.label()}`, north: `North: ${northAgent.label()}` };
    const you = humanSide.value;
    const other = you === "south" ? "north" : "south";
    return { [you]: `${SIDE[you]}: you`, [other]: `${SIDE[other]}: ${opponent.label()}` };
  }

  function render() {
    const humanTurn = mode.value === "human" && !over && !busy && pos.toMove === humanSide.value;
    drawBoard(boardEl, pos, {
      clickable: humanTurn ? legalMoves(pos) : [],
      turnSide: pos.toMove,
      onMove: humanMove,
      last,
      changed: prevPos,
      labels: labels(),
      over,
    });
    swapBtn.hidden = !(humanTurn && pos.swap);
    if (over) {
      const [s, n] = finalScores(pos);
      const winner = s > n ? "South" : n > s ? "North" : null;
      let who = "";
      if (mode.value === "human" && winner) who = winner.toLowerCase() === humanSide.value ? " You win!" : " You lose.";
      status.replaceChildren(h("strong", { id: "game-result" }, winner ? `${winner} wins ${Math.max(s, n)}–${Math.min(s, n)}.` : `Draw, ${s}–${n}.`), who);
      status.className = "game-status over";
    } else if (mode.value === "human") {
      const yours = pos.swap ? "Your move: click one of your pits, or swap." : "Your move: click one of your pits.";
      status.textContent = pos.toMove === humanSide.value ? (busy ? "…" : yours) : `${opponent.label()} is thinking…`;
      status.className = "game-status";
    } else {
      status.textContent = `${SIDE[pos.toMove]} to move${paused ? " (paused)" : ""}.`;
      status.className = "game-status";
    }
  }

  function describe(side, move, res, who, extra = "") {
    if (move === SWAP) {
      // Sides name players: the first mover stays South and now owns what was North's side.
      return `${SIDE[side]}${who ? ` (${who})` : ""} swapped: the seats are exchanged, and South moves again${extra}`;
    }
    const bits = [`${SIDE[side]}${who ? ` (${who})` : ""} played ${move}`];
    if (res.capture) bits.push(`captured ${res.capture}`);
    if (res.extra_turn && !res.game_over) bits.push("extra turn");
    if (res.game_over) bits.push("game over");
    return bits.join(", ") + extra;
  }

  function record(side, move, res, who, extra) {
    ply++;
    prevPos = pos;
    kpn = res.position_after;
    pos = parseKpn(kpn);
    over = !!res.game_over;
    last = move === SWAP ? null : { side, move };
    const text = describe(side, move, res, who, extra);
    // replaceChildren writes a null argument as the text "null": leave absent tags out.
    lastMove.replaceChildren(
      ...[
        h("span", text),
        move === SWAP ? h("span.tag.swap", "swap") : null,
        res.capture ? h("span.tag.capture", "capture") : null,
        res.extra_turn && !res.game_over ? h("span.tag.extra", "extra turn") : null,
      ].filter(Boolean),
    );
    log.append(h("li", { class: side }, text));
    log.scrollTop = log.scrollHeight;
    render();
  }

  async function newGame() {
    const mine = ++gameId;
    failures = 0;
    busy = false;
    paused = false;
    pauseBtn.textContent = "Pause";
    const m = Number(pitsInput.value);
    const n = Number(seedsInput.value);
    // The server away or restarting: the start is asked for again after a pause, longer each
    // time, and the banner goes once it answers (as on the run pages).
    for (let tries = 0; ; tries++) {
      try {
        const start = await api.start(m, n);
        if (mine !== gameId || stopped) return;
        kpn = start.position;
        pos = parseKpn(kpn);
        clearFlash();
        break;
      } catch (e) {
        if (mine !== gameId || stopped) return;
        if (!transient(e)) {
          flash(e.message, "error");
          return;
        }
        const wait = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** tries);
        flash(`The game could not be started: ${e.message}; trying again in ${Math.round(wait / 1000)} s`, "error");
        await sleep(wait);
        if (mine !== gameId || stopped) return;
      }
    }
    over = false;
    ply = 0;
    prevPos = null;
    last = null;
    lastMove.textContent = "";
    log.replaceChildren();
    render();
    if (mode.value === "human") agentLoop(mine);
    else watchLoop(mine);
  }

  async function humanMove(side, move) {
    if (busy || over || side !== pos.toMove) return;
    const mine = gameId;
    busy = true;
    render();
    try {
      const res = await api.position(kpn, move, pieInput.checked);
      if (mine !== gameId || stopped) return;
      busy = false;
      // An error shown before (the server was away) is no longer so.
      clearFlash();
      record(side, move, res, "you");
    } catch (e) {
      busy = false;
      render();
      flash(e.message, "error");
      return;
    }
    agentLoop(mine);
  }

  // Lets the agent move while it is its turn (extra turns included).
  async function agentLoop(mine) {
    while (!stopped && mine === gameId && !over && pos.toMove !== humanSide.value && mode.value === "human") {
      busy = true;
      render();
      const ok = await agentMove(mine, opponent, "");
      if (!ok) return;
      if (ok === "retry") continue;
      // A short pause so that a chain of extra turns can be followed by eye.
      if (!over && pos.toMove !== humanSide.value) await sleep(350);
    }
  }

  async function agentMove(mine, picker) {
    const side = pos.toMove;
    let spec;
    try {
      spec = picker.get();
    } catch (e) {
      busy = false;
      render();
      flash(e.message, "error");
      return false;
    }
    try {
      const res = await api.move(spec, kpn, Number(seedInput.value) + ply, pieInput.checked);
      if (mine !== gameId || stopped) return false;
      busy = false;
      const work = res.playouts ? `${res.playouts.toLocaleString()} playouts` : res.nodes != null ? `${res.nodes.toLocaleString()} nodes` : "";
      const extra = [work, res.value_text].filter(Boolean).map((t) => ` · ${t}`).join("");
      if (failures) clearFlash();
      failures = 0;
      record(side, res.move, res, picker.label(), extra);
      return true;
    } catch (e) {
      if (mine !== gameId || stopped) return false;
      busy = false;
      // The server away or busy: the same move is asked for again after a pause, longer each
      // time. A refusal (a bad agent) stops the game.
      if (transient(e)) {
        failures++;
        const wait = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** (failures - 1));
        flash(`${FAILED}: ${picker.label()}: ${e.message}; trying again in ${Math.round(wait / 1000)} s`, "error");
        render();
        await sleep(wait);
        return mine === gameId && !stopped ? "retry" : false;
      }
      render();
      flash(`${picker.label()}: ${e.message}`, "error");
      return false;
    }
  }

  let loopToken = 0;
  async function watchLoop(mine) {
    // Only the latest loop runs: pausing and resuming quickly must not start a second one.
    const token = ++loopToken;
    while (!stopped && mine === gameId && token === loopToken && !over && mode.value === "watch") {
      if (paused) return;
      const ok = await agentMove(mine, pos.toMove === "south" ? southAgent : northAgent);
      if (!ok) return;
      if (ok === "retry") continue;
      await sleep(Number(speed.value));
    }
  }

  async function watchStep() {
    if (mode.value !== "watch" || over || busy) return;
    if (!paused) togglePause();
    busy = true;
    await agentMove(gameId, pos.toMove === "south" ? southAgent : northAgent);
    busy = false;
  }

  function togglePause() {
    paused = !paused;
    pauseBtn.textContent = paused ? "Resume" : "Pause";
    render();
    if (!paused && mode.value === "watch" && !over) watchLoop(gameId);
  }

  await newGame();
  return () => {
    stopped = true;
  };
}
