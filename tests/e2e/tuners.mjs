// Issue 34 item 6: the New run form starts a run of every tuner (GA, CMA-ES, SPSA, TD,
// TD-Leaf, Texel), with the benchmark panel's fields, and a run's config comes back into the
// form.
//
//   node tests/e2e/tuners.mjs <base-url>     (tests/server/dashboard.rs starts the server)

import { api, base, check, step, withBrowser } from "./lib.mjs";

await withBrowser("tuners-e2e", async (page) => {
  const runId = () => decodeURIComponent(page.url().split("#/runs/")[1] || "");
  const started = {};

  async function submitAndRead(kind) {
    await page.click("#start-run");
    await page.waitForURL(/#\/runs\/[^/?]+$/);
    const id = runId();
    const run = await api(page, "GET", `/api/runs/${encodeURIComponent(id)}`);
    check(run.status === 200, `reading the ${kind} run: ${run.status} ${run.text}`);
    check((run.body.tuner || "ga") === kind, `the form started a ${run.body.tuner} run, not ${kind}`);
    started[kind] = id;
    return run.body;
  }

  await step("the form offers every tuner; the GA's preset hint names mankalah; the panel has fields", async () => {
    await page.goto(`${base}/#/new`);
    await page.locator("#f-tuner").waitFor();
    const tuners = await page.$$eval("#f-tuner option", (os) => os.map((o) => o.value));
    for (const t of ["ga", "cmaes", "spsa", "td", "td-leaf", "texel"]) check(tuners.includes(t), `no ${t} in the tuner list: ${tuners}`);
    const hint = (await page.locator('.field[data-key="preset"] .range').textContent()) || "";
    check(/mankalah/.test(hint), `the preset hint: ${hint}`);
    for (const key of ["benchmark-panel", "benchmark-pairs", "benchmark-every", "benchmark-leaders", "benchmark-opening_plies", "benchmark-agreement"]) {
      await page.locator(`#f-${key}`).waitFor({ state: "attached" });
    }
  });

  await step("a GA run with benchmark fields starts from the form", async () => {
    await page.fill("#f-name", "form ga");
    await page.fill("#f-population", "4");
    await page.fill("#f-generations", "2");
    await page.fill("#f-depth", "1");
    await page.fill("#f-fitness-games_per_pair", "2");
    await page.fill("#f-benchmark-panel", "random\nminimax:1");
    await page.fill("#f-benchmark-pairs", "1");
    await page.fill("#f-benchmark-every", "2");
    const run = await submitAndRead("ga");
    const b = run.config.benchmark;
    check(b.pairs === 1 && b.every === 2 && b.panel.length === 2, `the GA run's benchmark: ${JSON.stringify(b)}`);
  });

  await step("CMA-ES and SPSA runs start from the form: the GA's fields but its operators, and their own settings", async () => {
    for (const [tuner, setting, value] of [["cmaes", "cmaes-step", "0.2"], ["spsa", "spsa-gain", "0.3"]]) {
      await page.goto(`${base}/#/new`);
      await page.selectOption("#f-tuner", tuner);
      await page.locator(`#f-${setting}`).waitFor();
      check((await page.locator("#f-mutation-sigma").count()) === 0, `the ${tuner} form asks for a mutation`);
      check((await page.locator("#f-population").count()) === 1, `the ${tuner} form has no population`);
      const presets = await page.$$eval("#f-preset option", (os) => os.map((o) => o.value));
      check(presets.includes("abrams"), `${tuner}'s presets: ${presets}`);
      await page.fill("#f-name", `form ${tuner}`);
      await page.fill("#f-population", "5");
      await page.fill("#f-generations", "2");
      await page.fill("#f-depth", "1");
      await page.fill("#f-fitness-games_per_pair", "2");
      await page.fill("#f-benchmark-panel", "random");
      await page.fill("#f-benchmark-pairs", "1");
      await page.fill(`#f-${setting}`, value);
      await page.locator(`#f-${setting}`).dispatchEvent("change");
      await page.locator(".estimate", { hasText: "generations" }).waitFor();
      const run = await submitAndRead(tuner);
      const [section, key] = setting.split("-");
      check(run.config.tuner === tuner && run.config[section][key] === Number(value), `the ${tuner} run's config: ${JSON.stringify(run.config)}`);
      check(run.config.population === 5, `the ${tuner} run's population: ${run.config.population}`);
    }
  });

  await step("a TD run under the ahmed preset starts from the form", async () => {
    await page.goto(`${base}/#/new`);
    await page.selectOption("#f-tuner", "td");
    // Only the tuner's own fields are shown: no population for a learner.
    await page.locator("#f-games").waitFor();
    check((await page.locator("#f-population").count()) === 0, "a TD form asks for a population");
    const presets = await page.$$eval("#f-preset option", (os) => os.map((o) => o.value));
    check(presets.includes("ahmed") && !presets.includes("mankalah"), `TD's presets: ${presets}`);
    await page.selectOption("#f-preset", "ahmed");
    check((await page.inputValue("#f-lambda")) === "0", `ahmed's lambda: ${await page.inputValue("#f-lambda")}`);
    await page.fill("#f-name", "form td");
    await page.fill("#f-games", "32");
    await page.fill("#f-batch", "8");
    await page.fill("#f-depth", "1");
    await page.fill("#f-checkpoint_games", "16");
    await page.fill("#f-play_depth", "1");
    await page.fill("#f-benchmark-panel", "random\nminimax:1");
    await page.fill("#f-benchmark-pairs", "1");
    await page.locator("#f-benchmark-pairs").dispatchEvent("change");
    await page.locator(".estimate", { hasText: "checkpoints" }).waitFor();
    const run = await submitAndRead("td");
    check(run.preset === "ahmed", `the TD run's preset: ${run.preset}`);
    check(run.config.method === "td" && run.config.lambda === 0 && run.config.games === 32, `the TD run's config: ${JSON.stringify(run.config)}`);
    check(run.config.checkpoint_games === 16 && run.config.benchmark.panel.length === 2, `the TD run's checkpoints and panel: ${JSON.stringify(run.config)}`);
  });

  await step("a TD-Leaf run on another feature set starts from the form, its starting weights following the set", async () => {
    await page.goto(`${base}/#/new`);
    await page.selectOption("#f-tuner", "td-leaf");
    await page.locator("#f-games").waitFor();
    await page.selectOption("#f-features", "abrams3");
    const initial = await page.inputValue("#f-initial");
    check(initial.split(",").length === 3, `abrams3's starting weights: ${initial}`);
    await page.fill("#f-name", "form td-leaf");
    await page.fill("#f-games", "32");
    await page.fill("#f-batch", "8");
    await page.fill("#f-depth", "1");
    await page.fill("#f-checkpoint_games", "16");
    await page.fill("#f-play_depth", "1");
    await page.fill("#f-benchmark-panel", "random");
    await page.fill("#f-benchmark-pairs", "1");
    await page.fill("#f-benchmark-opening_plies", "2");
    const run = await submitAndRead("td-leaf");
    check(run.config.method === "td-leaf", `method ${run.config.method}`);
    check(JSON.stringify(run.config.features) === JSON.stringify(["store_diff", "side_diff", "overflow_diff"]), `features ${run.config.features}`);
    check(run.config.initial.length === 3 && run.config.benchmark.opening_plies === 2, `the TD-Leaf run's config: ${JSON.stringify(run.config)}`);
  });

  await step("a Texel run starts from the form, with its source agent", async () => {
    await page.goto(`${base}/#/new`);
    await page.selectOption("#f-tuner", "texel");
    await page.locator("#f-rounds").waitFor();
    const hint = (await page.locator('.field[data-key="preset"] .range').textContent()) || "";
    check(/none/.test(hint), `Texel's preset hint: ${hint}`);
    await page.fill("#f-name", "form texel");
    await page.fill("#f-source", "minimax:1");
    await page.fill("#f-games", "8");
    await page.fill("#f-positions_per_game", "4");
    await page.fill("#f-rounds", "1");
    await page.fill("#f-max_iters", "20");
    await page.fill("#f-depth", "1");
    await page.fill("#f-play_depth", "1");
    await page.fill("#f-benchmark-panel", "random");
    await page.fill("#f-benchmark-pairs", "1");
    const run = await submitAndRead("texel");
    check(run.config.method === "texel" && run.config.rounds === 1 && run.config.games === 8, `the Texel run's config: ${JSON.stringify(run.config)}`);
    check(JSON.stringify(run.config.source).includes("minimax"), `the Texel run's source: ${JSON.stringify(run.config.source)}`);
  });

  await step("every run started from the form finishes, its page naming its tuner", async () => {
    const names = { ga: "GA", cmaes: "CMA-ES", spsa: "SPSA", td: "TD", "td-leaf": "TD-Leaf", texel: "Texel" };
    for (const [kind, id] of Object.entries(started)) {
      await page.goto(`${base}/#/runs/${encodeURIComponent(id)}`);
      await page.locator(".title-line .badge", { hasText: /finished|failed|cancelled/ }).waitFor();
      const badge = (await page.textContent(".title-line .badge")) || "";
      check(/finished/.test(badge), `the ${kind} run ended ${badge}: ${(await page.textContent("main")) || ""}`.slice(0, 600));
      const sub = (await page.textContent("main")) || "";
      check(sub.includes(names[kind]), `the ${kind} run's page does not name ${names[kind]}`);
    }
  });

  await step("a learning run's config comes back into the form, with its tuner", async () => {
    await page.goto(`${base}/#/runs/${encodeURIComponent(started["td-leaf"])}`);
    await page.locator("#run-config-box summary").click();
    await page.locator("#run-copy").click();
    await page.locator("#f-tuner").waitFor();
    await page.waitForFunction(() => document.querySelector("#f-tuner")?.value === "td-leaf" && document.querySelector("#f-games")?.value === "32");
    check((await page.inputValue("#f-features")) === "abrams3", `features: ${await page.inputValue("#f-features")}`);
    check((await page.inputValue("#f-benchmark-opening_plies")) === "2", "the panel's openings were not copied");
  });

  await step("a learning form's bad field is named next to it, by the form and by the server", async () => {
    await page.fill("#f-games", "0");
    await page.click("#start-run");
    await page.locator("#err-games", { hasText: "games" }).waitFor();
    await page.fill("#f-games", "32");
    // The server's rule: a learning run's panel is never empty.
    await page.fill("#f-benchmark-panel", "");
    await page.click("#start-run");
    await page.locator("[id=\"err-benchmark.panel\"]", { hasText: "at least one" }).waitFor();
  });
});
