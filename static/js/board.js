// Kalah board for any number of pits: KPN parsing and drawing. South sits at the bottom and
// sows left to right into its store on the right; North sows right to left into its store on
// the left. Move k of a side is its k-th pit in sowing order (1 = farthest from its store).

import { h } from "./util.js";

/** Parses KPN "<South pits>/<South store>/<North pits>/<North store>/<S|N>". */
export function parseKpn(kpn) {
  const parts = String(kpn).trim().split("/");
  // A sixth field "P" (the pie rule) marks the one position where North may swap.
  if (parts.length !== 5 && !(parts.length === 6 && parts[5].trim().toUpperCase() === "P")) {
    throw new Error(`invalid KPN ${JSON.stringify(kpn)}: expected 5 fields separated by /, or 6 ending in P`);
  }
  const nums = (s) => s.split(",").map((x) => {
    const n = Number(x.trim());
    if (!Number.isInteger(n) || n < 0) throw new Error(`invalid KPN ${JSON.stringify(kpn)}: ${JSON.stringify(x)} is not a seed count`);
    return n;
  });
  const south = nums(parts[0]);
  const north = nums(parts[2]);
  if (south.length !== north.length) throw new Error(`invalid KPN: South has ${south.length} pits but North has ${north.length}`);
  const toMove = parts[4].trim().toUpperCase().startsWith("N") ? "north" : "south";
  return {
    pits: south.length,
    south,
    north,
    stores: [Number(parts[1]), Number(parts[3])],
    toMove,
    swap: parts.length === 6,
  };
}

/** Legal moves of the side to move: its non-empty pits, numbered from 1. */
export function legalMoves(pos) {
  const side = pos.toMove === "south" ? pos.south : pos.north;
  const moves = [];
  side.forEach((n, i) => n > 0 && moves.push(i + 1));
  return moves;
}

/** Each side's store plus the seeds left on its side (the final score of a finished game). */
export function finalScores(pos) {
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  return [pos.stores[0] + sum(pos.south), pos.stores[1] + sum(pos.north)];
}

const MAX_DOTS = 18;

// Seeds as dots scattered by a fixed pattern, so a pit looks the same every time it holds the
// same count; big counts fall back to the number alone.
function seedDots(n, salt) {
  const box = h("span.seeds", { "aria-hidden": "true" });
  const shown = Math.min(n, MAX_DOTS);
  for (let k = 0; k < shown; k++) {
    const a = (k * 2.399963 + salt) % (2 * Math.PI); // golden-angle spiral
    const r = 0.12 + 0.3 * Math.sqrt((k + 0.5) / Math.max(shown, 1));
    const dot = h("i");
    dot.style.left = `${50 + 100 * r * Math.cos(a)}%`;
    dot.style.top = `${50 + 100 * r * Math.sin(a)}%`;
    dot.style.setProperty("--hue", String((k * 47 + salt * 31) % 360));
    box.append(dot);
  }
  return box;
}

/**
 * Draws the board into `el` (replacing it). Options: `clickable` (moves the viewer may play
 * now), `onMove(side, move)`, `last` ({side, move}) to mark the pit just played, `changed`
 * (the previous position, to flash pits whose count changed), `labels` ({south, north}).
 */
export function drawBoard(el, pos, opts = {}) {
  const m = pos.pits;
  // Focus inside the board survives the redraw: on the same pit if it can still be played,
  // else on a playable pit, else on the board itself until one can be (a keyboard player
  // would otherwise land on <body> after every move).
  const active = document.activeElement;
  const hadFocus = !!active && active !== el && el.contains(active);
  const focused = hadFocus && active.dataset ? { side: active.dataset.side, move: active.dataset.move } : null;
  const clickable = new Set(opts.clickable || []);
  const prev = opts.changed || null;
  // A group, not a grid: the pits are laid out by CSS, with no rows for a grid role to name.
  const board = h("div.board", { style: { "--pits": m }, role: "group", tabIndex: -1, "aria-label": `Kalah board, ${m} pits a side` });

  const pit = (side, i) => {
    const n = side === "south" ? pos.south[i] : pos.north[i];
    const move = i + 1;
    const can = clickable.has(move) && opts.turnSide === side;
    const old = prev ? (side === "south" ? prev.south[i] : prev.north[i]) : n;
    const isLast = opts.last && opts.last.side === side && opts.last.move === move;
    const cell = h(
      can ? "button.pit" : "div.pit",
      {
        class: [side, can ? "playable" : null, isLast ? "last" : null, old !== n ? "changed" : null].filter(Boolean).join(" "),
        dataset: { side, move, seeds: n },
        title: `${side} move ${move}: ${n} seed${n === 1 ? "" : "s"}`,
        // A pit that cannot be played is an image of its seeds; a playable one is a button.
        role: can ? null : "img",
        "aria-label": `${side} pit ${move}, ${n} seed${n === 1 ? "" : "s"}${can ? ", play" : ""}`,
        onclick: can ? () => opts.onMove && opts.onMove(side, move) : null,
      },
      seedDots(n, i + (side === "north" ? 7 : 0)),
      h("span.count", n),
    );
    // North's pits run right to left on the top row; South's left to right on the bottom.
    // Upright (a narrow screen: the board turned a quarter clockwise), North's run bottom to
    // top in the right column, South's top to bottom in the left one.
    place(cell, side === "north" ? 1 : 2, side === "north" ? m + 1 - i : i + 2, side === "north" ? m + 1 - i : i + 2, side === "north" ? 2 : 1);
    return cell;
  };

  const store = (side) => {
    const n = side === "south" ? pos.stores[0] : pos.stores[1];
    const old = prev ? (side === "south" ? prev.stores[0] : prev.stores[1]) : n;
    const s = h(
      "div.store",
      { class: `${side}${old !== n ? " changed" : ""}`, dataset: { side, seeds: n }, title: `${side} store`, role: "img", "aria-label": `${side} store, ${n} seed${n === 1 ? "" : "s"}` },
      h("span.store-label", side === "south" ? "South" : "North"),
      h("span.count", n),
    );
    place(s, "1 / span 2", side === "north" ? 1 : m + 2, side === "north" ? 1 : m + 2, "1 / span 2");
    return s;
  };

  board.append(store("north"));
  board.dataset.pits = m;
  for (let i = 0; i < m; i++) board.append(pit("north", i));
  for (let i = 0; i < m; i++) board.append(pit("south", i));
  board.append(store("south"));

  // Move numbers under and over the pits, from each side's point of view.
  const numbers = (side) => {
    const row = h("div.move-numbers", { style: { "--pits": m } });
    for (let i = 0; i < m; i++) {
      const lbl = h("span", String(i + 1));
      place(lbl, 1, side === "north" ? m + 1 - i : i + 2, 1, 1);
      row.append(lbl);
    }
    return row;
  };

  const turn = pos.toMove;
  const direction = (side) => h("span.muted.direction", { dataset: { side } });
  el.replaceChildren(
    h("div.side-label.north", { class: turn === "north" && !opts.over ? "to-move" : null }, opts.labels?.north || "North", " ", direction("north")),
    numbers("north"),
    board,
    numbers("south"),
    h("div.side-label.south", { class: turn === "south" && !opts.over ? "to-move" : null }, opts.labels?.south || "South", " ", direction("south")),
  );
  fitBoard(el);
  // The space a board has changes with the window (a phone turned): it is fitted again.
  if (!el.__fitObserver && typeof ResizeObserver === "function") {
    let width = el.clientWidth;
    el.__fitObserver = new ResizeObserver(() => {
      if (el.clientWidth !== width) {
        width = el.clientWidth;
        fitBoard(el);
      }
    });
    el.__fitObserver.observe(el);
  }
  if (hadFocus) {
    const same = focused && focused.move ? board.querySelector(`button.pit[data-side="${focused.side}"][data-move="${focused.move}"]`) : null;
    (same || board.querySelector("button.pit") || board).focus({ preventScroll: true });
  }
}

/** Smallest pit, in CSS pixels, a finger can hit (WCAG 2.5.8 asks 24; phones' guides 44–48). */
const MIN_PIT_PX = 40;
const MAX_PIT_PX = 78;

/**
 * Places a board cell by CSS variables: row and column across (`--hr`, `--hc`) and upright
 * (`--vr`, `--vc`); the stylesheet picks one pair by the board's layout.
 */
function place(node, hr, hc, vr, vc) {
  node.style.setProperty("--hr", String(hr));
  node.style.setProperty("--hc", String(hc));
  node.style.setProperty("--vr", String(vr));
  node.style.setProperty("--vc", String(vc));
}

/**
 * Sizes the board drawn in `el` to the width it has: across, with pits as large as fit (up to
 * 78 px), while they are at least 40 px; else upright, two columns of pits, so that a 12-pit
 * board on a phone still has pits a finger can hit.
 */
export function fitBoard(el) {
  const board = el.querySelector(".board");
  if (!board) return;
  const m = Number(board.dataset.pits) || 6;
  const width = el.clientWidth || window.innerWidth;
  // Across, the board is cell × (1.12 m + 2.98) wide: m pits, two stores of 1.25, gaps of
  // 0.12 and padding of 0.18 cells; upright, cell × 2.48.
  const across = Math.floor(Math.min(MAX_PIT_PX, (width - 4) / (1.12 * m + 3)));
  const upright = across < MIN_PIT_PX;
  const cell = upright ? Math.max(MIN_PIT_PX, Math.min(64, Math.floor((width - 4) / 2.5))) : across;
  el.classList.toggle("upright", upright);
  for (const node of el.querySelectorAll(".board, .move-numbers")) node.style.setProperty("--cell", `${cell}px`);
  for (const node of el.querySelectorAll(".direction")) {
    const north = node.dataset.side === "north";
    node.textContent = `(moves 1…${m} ${upright ? (north ? "bottom to top" : "top to bottom") : north ? "right to left" : "left to right"})`;
  }
}
