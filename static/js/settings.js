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
  view.append(
    h(
      "section.card.narrow",
      h("h1", "Settings"),
      h(
        "form",
        {
          onsubmit: (e) => {
            e.preventDefault();
            setToken(input.value.trim());
            flash(input.value.trim() ? "Token saved in this browser." : "Token removed.", "ok");
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
      h("p", h("a", { href: "api/openapi.json", target: "_blank" }, "OpenAPI document"), " of the JSON API."),
    ),
  );
  try {
    const hz = await api.get("healthz");
    health.textContent = `${hz.status}, database ${hz.database}`;
    health.className = "ok";
  } catch (e) {
    health.textContent = e.message;
    health.className = "error-text";
  }
}
