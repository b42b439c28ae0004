// Providers (/providers): the provider packages installed in the environment (GET providers), as Airflow lists
// them, each linking to its documentation.

import { all } from "./api.js";
import { errorBox, h, table } from "./view.js";

export async function providersPage(main) {
  const box = h("div", {}, h("p", { class: "muted loading" }, "Loading…"));
  main.replaceChildren(h("h1", {}, "Providers"), box);
  try {
    const providers = await all("providers", "providers");
    box.replaceChildren(h("div", { class: "scroll" }, table(["Package", "Version", "Description"],
      providers.map((p) => h("tr", {}, h("td", {}, /^https:\/\//.test(p.documentation_url || "")
        ? h("a", { href: p.documentation_url, rel: "noopener noreferrer", target: "_blank" }, p.package_name)
        : p.package_name), h("td", {}, p.version), h("td", {}, p.description))), { class: "list" })));
  } catch (error) {
    box.replaceChildren(errorBox(error));
  }
  return null;
}
