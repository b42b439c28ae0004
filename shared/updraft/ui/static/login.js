// The login page (/auth/login): POST <root>/ui/session with the credentials; the server keeps the token in an
// HttpOnly cookie (this script never sees it) that goes with every call the page makes through the session.

import { link, root, signIn } from "./api.js";
import { errorBox, h } from "./view.js";

export async function loginPage(main, _params, { navigate }) {
  const username = h("input", { id: "username", name: "username", autocomplete: "username", required: true });
  const password = h("input", { id: "password", name: "password", type: "password",
    autocomplete: "current-password", required: true });
  const errors = h("div", {});
  const form = h("form", { class: "panel login", "aria-label": "Sign in" }, h("h1", {}, "Sign in to Updraft"),
    h("div", { class: "field" }, h("label", { for: "username" }, "Username"), username),
    h("div", { class: "field" }, h("label", { for: "password" }, "Password"), password), errors,
    h("button", { type: "submit", class: "primary" }, "Sign in"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errors.replaceChildren();
    try {
      await signIn(username.value, password.value);
      const next = new URLSearchParams(location.search).get("next");
      navigate(next && next.startsWith(root) ? next : link("dags"));
    } catch (error) {
      errors.replaceChildren(errorBox(error));
    }
  });
  main.replaceChildren(form);
  username.focus();
}
