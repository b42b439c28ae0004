// Views loaded when first shown, not with the app: the first page paints after fetching only the modules it needs
// (the dashboard, charts and browse lists stay unfetched until their page is opened).

/** A page (main, params, ctx) => ... that imports ``module`` (a path relative to this file) and draws its ``name``. */
export function lazy(module, name) {
  return async (...args) => (await import(module))[name](...args);
}
