// Hash router: each page module exports mount(view, params) and returns a cleanup function
// that stops its timers, event streams and charts when the user navigates away.

import { api } from "./api.js";
import { flash, h, setTuners } from "./util.js";
import * as runs from "./runs.js";
import * as newRun from "./newrun.js";
import * as run from "./run.js";
import * as play from "./play.js";
import * as tournament from "./tournament.js";
import * as settings from "./settings.js";
import * as compare from "./compare.js";
import * as sprt from "./sprt.js";
import * as workers from "./workers.js";
import * as ladder from "./ladder.js";
import { initTheme } from "./theme.js";

initTheme();

const routes = [
  { re: /^\/?$/, page: runs, nav: "runs" },
  { re: /^\/runs\/?$/, page: runs, nav: "runs" },
  { re: /^\/new\/?$/, page: newRun, nav: "new" },
  { re: /^\/runs\/([^/]+)\/?$/, page: run, nav: "runs", params: (m) => ({ id: decodeURIComponent(m[1]) }) },
  { re: /^\/play\/?$/, page: play, nav: "play" },
  { re: /^\/tournament\/?$/, page: tournament, nav: "tournament" },
  { re: /^\/settings\/?$/, page: settings, nav: "settings" },
  { re: /^\/compare\/?$/, page: compare, nav: "runs" },
  { re: /^\/sprt\/?$/, page: sprt, nav: "sprt" },
  { re: /^\/workers\/?$/, page: workers, nav: "workers" },
  { re: /^\/ladder\/?$/, page: ladder, nav: "ladder" },
];

let cleanup = null;
let generation = 0;
let firstRender = true;

// A skip link, first in the page. Not a plain "#view" link: the router reads the hash.
const skip = h("a.skip-link", { href: "#view", onclick: (e) => (e.preventDefault(), focusHeading()) }, "Skip to content");
document.body.prepend(skip);

/** Moves the focus to the page's main heading (or the main area), as a page load would. */
function focusHeading() {
  const target = document.querySelector("#view h1") || document.getElementById("view");
  if (!target.hasAttribute("tabindex")) target.tabIndex = -1;
  target.focus({ preventScroll: false });
}

/** The window's title: the page's heading, then the app's name. */
function setTitle(view) {
  const heading = view.querySelector("h1")?.textContent?.trim();
  document.title = heading ? `${heading} · kalah-tuner` : "kalah-tuner";
}

/** After a route change (not the first load), the page's title and focus follow it. */
function settle(view, mine) {
  if (mine !== generation) return;
  setTitle(view);
  if (!firstRender) focusHeading();
  firstRender = false;
}

function parseHash() {
  const raw = location.hash.replace(/^#/, "");
  const [path, query = ""] = raw.split("?");
  return { path: path || "/", query: new URLSearchParams(query) };
}

async function render() {
  const mine = ++generation;
  const { path, query } = parseHash();
  if (cleanup) {
    try {
      cleanup();
    } catch (e) {
      console.error(e);
    }
    cleanup = null;
  }
  flash("");
  // Each page gets its own root, so a slow page that finishes loading after the user moved
  // on draws into a detached element instead of the new page.
  const view = h("div.page");
  document.getElementById("view").replaceChildren(view);
  const route = routes.find((r) => r.re.test(path));
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("active", !!route && a.dataset.route === route.nav);
  }
  if (!route) {
    view.append(h("section.card", h("h1", "Not found"), h("p", "No page at ", h("code", path), ". "), h("a", { href: "#/runs" }, "Back to the runs")));
    settle(view, mine);
    return;
  }
  const m = path.match(route.re);
  const params = Object.assign({ query }, route.params ? route.params(m) : {});
  try {
    const done = (await route.page.mount(view, params)) || null;
    // The user may have navigated on while this page was loading.
    if (mine !== generation) {
      if (done) done();
    } else {
      cleanup = done;
    }
  } catch (e) {
    console.error(e);
    flash(e.message || String(e), "error");
  }
  settle(view, mine);
}

window.addEventListener("hashchange", render);
// Module scripts run after the document is parsed, so the view exists already. The pages
// name tuners as the server's schema does; without it (an old server) they show the ids.
api
  .configSchema()
  .then((schema) => setTuners(schema.tuners))
  .catch(() => {})
  .finally(render);
