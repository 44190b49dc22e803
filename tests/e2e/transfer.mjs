// Issue 34 item 17: responses are gzip-compressed when the client asks, but the event streams
// (GET /api/events, /api/runs/{id}/events) are not, so that each event arrives when sent; a
// run's curve comes a page at a time (limit + next_since), and the run page asks for pages;
// the runs list comes in pages (limit + cursor), as a summary without configs and weights,
// and an unchanged list polled again is a 304 (ETag).
//
//   node tests/e2e/transfer.mjs <base-url>     (tests/server/dashboard.rs starts the server)

import http from "node:http";
import { api, base, check, step, withBrowser } from "./lib.mjs";

/** The status and headers of a GET asking for gzip; the body is not waited for. */
function head(path) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { "Accept-Encoding": "gzip" } }, (res) => {
      resolve({ status: res.statusCode, headers: res.headers });
      res.destroy();
    });
    req.on("error", (e) => (e.code === "ECONNRESET" ? null : reject(e)));
    req.setTimeout(20000, () => req.destroy(new Error(`no answer to ${path}`)));
  });
}

/** A whole GET's status, headers and body, with the given request headers. */
function get(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.setTimeout(20000, () => req.destroy(new Error(`no answer to ${path}`)));
  });
}

await withBrowser("transfer-e2e", async (page) => {
  let id = "";
  await step("a run of several generations is made", async () => {
    await page.goto(`${base}/#/runs`);
    const made = await api(page, "POST", "/api/runs", {
      name: "paged run",
      config: { population: 4, generations: 7, depth: 1, fitness: { games_per_pair: 2 }, benchmark: { panel: [] } },
    });
    check(made.status === 201, `creating the run: ${made.status} ${made.text}`);
    id = made.body.id;
    await page.goto(`${base}/#/runs/${id}`);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
  });

  await step("JSON answers are gzip-compressed when asked, event streams are not", async () => {
    for (const path of ["/api/runs", `/api/runs/${id}/generations`, "/api/config-schema", "/js/run.js"]) {
      const r = await head(path);
      check(r.status === 200, `${path}: ${r.status}`);
      check(r.headers["content-encoding"] === "gzip", `${path} is not gzipped: ${JSON.stringify(r.headers)}`);
    }
    const plain = await new Promise((resolve, reject) =>
      http.get(`${base}/api/runs`, (res) => {
        resolve(res.headers["content-encoding"]);
        res.resume();
      }).on("error", reject),
    );
    check(plain === undefined, `gzip without being asked: ${plain}`);
    for (const path of ["/api/events", `/api/runs/${id}/events`]) {
      const r = await head(path);
      check(r.status === 200 && /text\/event-stream/.test(r.headers["content-type"] || ""), `${path}: ${r.status} ${r.headers["content-type"]}`);
      check(!r.headers["content-encoding"], `${path} is compressed (${r.headers["content-encoding"]}): its events would wait in the compressor`);
    }
    // And the browser, which always asks, reads fewer bytes than it gets.
    const sizes = await page.evaluate(() =>
      performance.getEntriesByType("resource").filter((e) => e.name.includes("/generations")).map((e) => [e.encodedBodySize, e.decodedBodySize]),
    );
    // (A body of a few dozen bytes gains nothing from gzip: only the larger ones are judged.
    // A curve of a few hundred bytes of distinct numbers compresses to about half, so the bar
    // is a quarter saved: an uncompressed answer, or one compressed twice, saves nothing.)
    const large = sizes.filter(([, dec]) => dec > 500);
    check(large.length > 0 && large.every(([enc, dec]) => enc < dec * 0.75), `the page's curve requests: ${JSON.stringify(sizes)}`);
  });

  await step("the curve comes in pages that add up to the whole, and a bad limit is refused", async () => {
    const whole = await api(page, "GET", `/api/runs/${id}/generations`);
    check(whole.status === 200 && whole.body.generations.length === 7 && whole.body.next_since === null, `the whole curve: ${whole.body?.generations?.length} points, next_since ${whole.body?.next_since}`);
    const seen = [];
    let since = null;
    for (let pages = 0; pages < 10; pages++) {
      const r = await api(page, "GET", `/api/runs/${id}/generations?limit=3${since == null ? "" : `&since=${since}`}`);
      check(r.status === 200 && r.body.generations.length <= 3, `a page: ${r.text.slice(0, 300)}`);
      seen.push(...r.body.generations.map((g) => g.generation));
      if (r.body.next_since == null) break;
      since = r.body.next_since;
    }
    check(JSON.stringify(seen) === JSON.stringify(whole.body.generations.map((g) => g.generation)), `pages gave ${seen}`);
    for (const bad of ["0", "-1", "9999999", "x"]) {
      const r = await api(page, "GET", `/api/runs/${id}/generations?limit=${bad}`);
      check(r.status === 400 || r.status === 422, `limit=${bad}: ${r.status}`);
      check(r.body?.error?.field === "limit" || /limit/.test(r.text), `limit=${bad}: ${r.text}`);
    }
  });

  await step("the runs list comes in pages too, each run once, and a bad cursor is refused", async () => {
    for (const name of ["paged list 1", "paged list 2"]) {
      const made = await api(page, "POST", "/api/runs", { name, config: { population: 4, generations: 1, depth: 1, benchmark: { panel: [] } } });
      check(made.status === 201, `creating ${name}: ${made.status} ${made.text}`);
    }
    const whole = await api(page, "GET", "/api/runs");
    check(whole.status === 200 && whole.body.runs.length === 3 && whole.body.next_cursor === null, `the whole list: ${whole.text.slice(0, 300)}`);
    const seen = [];
    let cursor = null;
    for (let pages = 0; pages < 10; pages++) {
      const r = await api(page, "GET", `/api/runs?limit=1${cursor == null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
      check(r.status === 200 && r.body.runs.length <= 1, `a page: ${r.text.slice(0, 300)}`);
      seen.push(...r.body.runs.map((run) => run.id));
      if (r.body.next_cursor == null) break;
      cursor = r.body.next_cursor;
    }
    check(JSON.stringify(seen) === JSON.stringify(whole.body.runs.map((run) => run.id)), `pages gave ${seen}`);
    // The runs page polls the first page as the server keeps it ready: without a limit.
    const asked = [];
    const onRequest = (r) => /\/api\/runs(\?|$)/.test(r.url()) && asked.push(r.url());
    page.on("request", onRequest);
    await page.goto(`${base}/#/runs`);
    await page.locator("table.runs tbody tr").nth(2).waitFor();
    page.off("request", onRequest);
    check(asked.length > 0 && asked.every((u) => new URL(u).search === "?fields=summary"), `the runs page asked ${asked}`);
    await page.goto(`${base}/#/runs/${id}`);
    await page.locator("#chart-fitness .uplot").waitFor();
    for (const bad of ["limit=0", "limit=x", "cursor=nope", "fields=weights"]) {
      const r = await api(page, "GET", `/api/runs?${bad}`);
      check(r.status === 400 || r.status === 422, `${bad}: ${r.status}`);
      const name = bad.split("=")[0];
      check(r.body?.error?.field === name || r.text.includes(name), `${bad}: ${r.text}`);
    }
  });

  await step("the runs list polled unchanged costs a 304, and its summary leaves config and weights out", async () => {
    const summary = await api(page, "GET", "/api/runs?fields=summary");
    const whole = await api(page, "GET", "/api/runs");
    check(summary.status === 200 && summary.body.runs.length === whole.body.runs.length, `summary: ${summary.text.slice(0, 300)}`);
    for (const run of summary.body.runs) {
      check(!("config" in run) && !("best_weights" in run) && !("features" in run), `a summary row has ${Object.keys(run)}`);
      check(typeof run.id === "string" && "status" in run && "best_fitness" in run && "progress" in run, `a summary row lacks a field: ${Object.keys(run)}`);
    }
    check(summary.text.length * 2 < whole.text.length, `the summary is ${summary.text.length} bytes, the whole list ${whole.text.length}`);
    const first = await get("/api/runs?fields=summary");
    const etag = first.headers.etag;
    check(first.status === 200 && etag, `first poll: ${first.status} ${JSON.stringify(first.headers)}`);
    const again = await get("/api/runs?fields=summary", { "If-None-Match": etag });
    check(again.status === 304 && again.body.length === 0, `unchanged poll: ${again.status}, ${again.body.length} bytes`);
    const other = await get("/api/runs", { "If-None-Match": etag });
    check(other.status === 200, `the whole list is another representation: ${other.status}`);
    const made = await api(page, "POST", "/api/runs", { name: "changes the list", config: { population: 4, generations: 1, depth: 1, benchmark: { panel: [] } } });
    check(made.status === 201, `creating a run: ${made.status} ${made.text}`);
    const changed = await get("/api/runs?fields=summary", { "If-None-Match": etag });
    check(changed.status === 200 && changed.headers.etag !== etag && changed.body.includes("changes the list"), `after a change: ${changed.status} ${changed.headers.etag}`);
  });

  await step("the run page reads its curve a page at a time", async () => {
    const asked = [];
    page.on("request", (r) => r.url().includes("/generations") && asked.push(r.url()));
    await page.reload();
    await page.locator("#chart-fitness .uplot").waitFor();
    await page.waitForFunction(() => /^7 /.test(document.querySelector("#gen-count")?.textContent || ""));
    check(asked.length > 0 && asked.every((u) => /[?&]limit=\d+/.test(u) || /\/generations\/\d+/.test(u)), `the page asked ${asked}`);
  });
});
