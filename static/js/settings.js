// Settings: the API token (KALAH_TUNER_TOKEN on the server), kept in localStorage.

import { getToken, setToken, api } from "./api.js";
import { flash, h } from "./util.js";

export async function mount(view) {
  const input = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    value: getToken(),
    placeholder: "empty: no token",
  });
  const show = h("input", {
    type: "checkbox",
    onchange: () => (input.type = show.checked ? "text" : "password"),
  });
  const health = h("span.muted", "checking…");
  const need = h("p", { id: "token-need" }, "Token: checking…");
  async function showNeed() {
    const withNone = await api.checkToken("");
    need.textContent =
      withNone === "ok"
        ? "This server takes changes without a token."
        : withNone === "refused"
          ? `This server needs a token for changes (new runs, cancel, games)${getToken() ? "" : ": none is set in this browser"}.`
          : "Token: the server did not answer.";
  }
  view.append(
    h(
      "section.card.narrow",
      h("h1", "Settings"),
      h(
        "form",
        {
          onsubmit: async (e) => {
            e.preventDefault();
            const token = input.value.trim();
            if (token) {
              // Checked before it is kept: a wrong token would fail every change later.
              const answer = await api.checkToken(token);
              if (answer === "refused") {
                flash("The server refuses this token: it was not saved. Check it against KALAH_TUNER_TOKEN.", "error");
                return;
              }
              setToken(token);
              flash(answer === "ok" ? "Token saved in this browser; the server takes it." : "Token saved in this browser (the server did not answer, so it is not checked yet).", "ok");
            } else {
              setToken("");
              flash("Token removed.", "ok");
            }
            showNeed();
          },
        },
        h("label", { for: "token" }, "API token"),
        h(
          "p.hint",
          "Needed only when the server was started with KALAH_TUNER_TOKEN set: it is sent as ",
          h("code", "Authorization: Bearer …"),
          " with every change (new runs, cancel, resume, delete, games). It stays in this browser's local storage.",
        ),
        input,
        h("label.inline", show, " show"),
        h("div.actions", h("button.primary", { type: "submit" }, "Save")),
      ),
      h("h2", "Server"),
      h("p", "Health: ", health),
      need,
      h("p", h("a", { href: "api/openapi.json", target: "_blank" }, "OpenAPI document"), " of the JSON API."),
    ),
  );
  showNeed();
  try {
    const hz = await api.get("healthz");
    health.textContent = `${hz.status}, database ${hz.database}`;
    health.className = "ok";
  } catch (e) {
    health.textContent = e.message;
    health.className = "error-text";
  }
}
