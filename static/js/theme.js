// Light or dark colours: the system's preference until the user picks one with the toggle in
// the top bar, which is remembered in this browser. app.css reads <html data-theme>.

const KEY = "kalah-tuner-theme";
const system = window.matchMedia("(prefers-color-scheme: dark)");

function chosen() {
  try {
    const t = localStorage.getItem(KEY);
    return t === "dark" || t === "light" ? t : null;
  } catch {
    return null;
  }
}

function apply() {
  const theme = chosen() || (system.matches ? "dark" : "light");
  document.documentElement.dataset.theme = theme;
  document.documentElement.style.colorScheme = theme;
  const button = document.getElementById("theme-toggle");
  if (button) {
    button.textContent = theme === "dark" ? "☀ Light" : "☾ Dark";
    button.setAttribute("aria-pressed", String(theme === "dark"));
    button.title = `Switch to ${theme === "dark" ? "light" : "dark"} colours`;
  }
}

/** Sets the theme now and keeps it in step with the toggle and the system. */
export function initTheme() {
  apply();
  system.addEventListener("change", apply);
  document.getElementById("theme-toggle")?.addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    try {
      localStorage.setItem(KEY, next);
    } catch {
      // Private windows may refuse storage: the choice lasts for this page only.
    }
    apply();
    // Charts read their colours when drawn: redraw the page.
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  });
}
