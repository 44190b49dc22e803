// The first tutorial (docs/tutorials/first-run.md), step by step in a browser, as its reader
// does it: open the dashboard, New run, name it, start it, wait for it to finish, Export JSON.
// benches/first-run-tutorial.sh times it from a bare clone.
//
//   node tests/e2e/first-run.mjs <base-url> <export-path>

import { writeFileSync } from "node:fs";
import { base, check, step, withBrowser } from "./lib.mjs";

const exportPath = process.argv[3] || "kalah-tuner-export.json";

await withBrowser("first-run tutorial", async (page) => {
  await step("3. New run: name it and start it", async () => {
    await page.goto(`${base}/`);
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-tuner").waitFor();
    check((await page.inputValue("#f-tuner")) === "ga", "the form does not open on the GA");
    await page.selectOption("#f-preset", "main-job");
    await page.fill("#f-name", "my first run");
    check((await page.inputValue("#f-population")) === "24", "the main-job preset does not set population 24");
    const estimate = page.locator("p.estimate", { hasText: /minute|hour|second/ });
    await estimate.waitFor();
    console.log(`     estimate: ${(await estimate.textContent()).trim()}`);
    await page.click("#start-run");
    await page.locator(".title-line .badge").waitFor();
  });
  await step("4. the run finishes, its panel curve drawn", async () => {
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor({ timeout: 15 * 60 * 1000 });
    check(await page.locator("#chart-panel").count(), "no benchmark panel chart");
  });
  await step("5. Export JSON", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-download")]);
    await download.saveAs(exportPath);
    check(/^kalah-tuner-.*\.json$/.test(download.suggestedFilename()), `unexpected file name ${download.suggestedFilename()}`);
    writeFileSync(`${exportPath}.name`, download.suggestedFilename());
  });
});
