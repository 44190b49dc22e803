// Issue 34, item 19: "a wrong token is saved without a check, and a read-only visitor learns
// that a token is needed only on submit". The server runs with KALAH_TUNER_TOKEN set
// (tests/server/dashboard.rs starts it and hands the token over in E2E_TOKEN); the browser starts
// without one, as a visitor's does.
//
//   E2E_TOKEN=... node tests/e2e/token.mjs <base-url>

import { base, check, step, withBrowser } from "./lib.mjs";

const token = process.env.E2E_TOKEN || "";
if (!token) {
  console.error("E2E_TOKEN: the server's KALAH_TUNER_TOKEN (tests/server/dashboard.rs sets it)");
  process.exit(2);
}

const TOKEN_KEY = "kalah-tuner.token";
const stored = (page) => page.evaluate((key) => localStorage.getItem(key), TOKEN_KEY);

await withBrowser("token-e2e", async (page) => {
  await step("a read-only visitor is told on opening the New run form that a token is needed", async () => {
    await page.goto(`${base}/#/runs`);
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-population").waitFor();
    // Nothing typed, nothing submitted: the note is there on its own.
    const note = page.locator("#token-note", { hasText: "This server needs an API token to start runs" });
    await note.waitFor({ state: "visible", timeout: 15000 });
    check((await note.locator('a[href="#/settings"]').count()) === 1, "the note does not lead to Settings");
    check(!(await page.locator("#flash.show.error").count()), `an error banner before any submit: ${await page.textContent("#flash")}`);
    // The estimate does not blame the config for the missing token.
    await page.locator(".estimate", { hasText: "No estimate: the server gives one only with its API token" }).waitFor();
  });

  await step("Settings refuse a wrong token with a message and keep none", async () => {
    await page.click('#nav a[data-route="settings"]');
    await page.locator("#token-need", { hasText: "needs a token for changes" }).waitFor();
    check(/none is set in this browser/.test((await page.textContent("#token-need")) || ""), `the settings page: ${await page.textContent("#token-need")}`);
    await page.fill("#token", `${token}-wrong`);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("#flash.show.error", { hasText: "The server refuses this token: it was not saved" }).waitFor();
    check((await stored(page)) === null, `the wrong token was stored: ${await stored(page)}`);
    await page.reload();
    await page.locator("#token").waitFor();
    check((await page.inputValue("#token")) === "", "the wrong token is back in the field after a reload");
  });

  await step("Settings keep the right token after the server took it", async () => {
    await page.fill("#token", token);
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("#flash.show.ok", { hasText: "the server takes it" }).waitFor();
    check((await stored(page)) === token, "the right token was not stored");
    await page.locator("#token-need", { hasText: "needs a token for changes" }).waitFor();
    check(!/none is set/.test((await page.textContent("#token-need")) || ""), `after saving: ${await page.textContent("#token-need")}`);
  });

  await step("with the token, the New run form has no note, estimates, and starts a run", async () => {
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-population").waitFor();
    await page.fill("#f-name", "e2e run with a token");
    await page.fill("#f-population", "4");
    await page.fill("#f-depth", "1");
    await page.fill("#f-generations", "1");
    await page.locator("#f-generations").dispatchEvent("change");
    await page.locator(".estimate", { hasText: /^1 generation; .* processor time/ }).waitFor();
    check(await page.locator("#token-note").isHidden(), `a token note with the right token: ${await page.textContent("#token-note")}`);
    await page.click("#start-run");
    await page.waitForURL(/#\/runs\/[^/]+$/);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
  });

  await step("a token the server no longer takes is named on the New run form", async () => {
    // As after the server's token was changed: the one kept here is refused.
    await page.evaluate(([key, t]) => localStorage.setItem(key, t), [TOKEN_KEY, `${token}-old`]);
    await page.goto(`${base}/#/runs`);
    await page.click('#nav a[data-route="new"]');
    await page.locator("#token-note", { hasText: "The server refuses the API token kept in this browser" }).waitFor({ state: "visible", timeout: 15000 });
  });
});
