// Issue 34 item 13: the largest board (12 pits) fits at 1280 px with pits as large as fit,
// and on a phone (390 px) it stands upright with pits a finger can hit, and a tap plays.
//
//   node tests/e2e/board.mjs <base-url>     (tests/server/dashboard.rs starts the server)

import { base, check, step, withBrowser } from "./lib.mjs";

await withBrowser("board-e2e", async (page) => {
  const measure = () =>
    page.evaluate(() => {
      const pits = [...document.querySelectorAll("#board .pit")].map((p) => p.getBoundingClientRect());
      const card = document.querySelector("#board").closest(".card");
      const box = card.getBoundingClientRect();
      const board = document.querySelector("#board .board").getBoundingClientRect();
      return {
        pits: pits.length,
        smallest: Math.min(...pits.map((r) => Math.min(r.width, r.height))),
        board: [board.left, board.right],
        card: [box.left, box.right],
        cardScroll: card.scrollWidth - card.clientWidth,
        pageScroll: document.documentElement.scrollWidth - window.innerWidth,
        upright: document.querySelector("#board").classList.contains("upright"),
      };
    });

  async function twelvePits() {
    await page.goto(`${base}/#/play`);
    await page.locator("#play-pits").waitFor();
    await page.fill("#play-pits", "12");
    await page.dispatchEvent("#play-pits", "change");
    await page.waitForFunction(() => document.querySelectorAll("#board .pit").length === 24);
  }

  await step("at 1280 px a 12-pit board lies across its card, unclipped, pits of 40 px or more", async () => {
    await twelvePits();
    const m = await measure();
    check(!m.upright, "the board stands upright at 1280 px");
    check(m.board[0] >= m.card[0] && m.board[1] <= m.card[1] && m.cardScroll <= 1, `the board does not fit its card: ${JSON.stringify(m)}`);
    check(m.smallest >= 40, `pits of ${m.smallest} px at 1280 px`);
  });

  await step("on a 390 px phone a 12-pit board stands upright, fits the screen, and its pits are 40 px or more", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => document.querySelector("#board")?.classList.contains("upright"));
    const m = await measure();
    check(m.pits === 24, `${m.pits} pits`);
    check(m.smallest >= 40, `pits of ${m.smallest} px on a phone`);
    check(m.pageScroll <= 1 && m.cardScroll <= 1, `the page scrolls sideways: ${JSON.stringify(m)}`);
    const text = (await page.textContent("#board")) || "";
    check(/top to bottom/.test(text), `the side labels do not say which way the moves run: ${text}`);
    // A fresh page at that size, too (not only a board resized from a wide one).
    await twelvePits();
    const again = await measure();
    check(again.upright && again.smallest >= 40 && again.pageScroll <= 1, `a board drawn at 390 px: ${JSON.stringify(again)}`);
  });

  await step("on a phone a tap on a pit plays it", async () => {
    const before = await page.textContent("#board .store.south .count");
    // A tap that lands while the board is being drawn again (the page settling at its new
    // size) reaches a button that is gone: tap the playable pit again until the move shows.
    const deadline = Date.now() + 120000;
    for (;;) {
      await page.waitForSelector("#board button.pit.playable");
      const pit = page.locator("#board button.pit.playable").last();
      await pit.tap().catch(async () => pit.click().catch(() => {}));
      const moved = await page
        .waitForFunction((b) => document.querySelector("#board .store.south .count")?.textContent !== b, before, { timeout: 5000 })
        .then(() => true, () => false);
      if (moved) break;
      check(Date.now() < deadline, "a tap on a playable pit never played it");
    }
  });

  await step("a standard board on a phone has tappable pits too, and back at 1280 px lies across", async () => {
    await page.fill("#play-pits", "6");
    await page.dispatchEvent("#play-pits", "change");
    await page.waitForFunction(() => document.querySelectorAll("#board .pit").length === 12);
    const m = await measure();
    check(m.smallest >= 40 && m.pageScroll <= 1, `a 6-pit board on a phone: ${JSON.stringify(m)}`);
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.waitForFunction(() => !document.querySelector("#board")?.classList.contains("upright"));
    const wide = await measure();
    check(wide.smallest >= 56, `a 6-pit board at 1280 px has pits of ${wide.smallest} px`);
  });
});
