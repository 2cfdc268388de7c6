// cachedex: small progressive enhancements. Every page is complete without them.
"use strict";
(function () {
  const root = document.body.dataset.root || "";

  // Copy buttons.
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (!button) return;
    const text = button.dataset.copy;
    const done = () => { button.classList.add("done"); button.textContent = "copied"; };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, done); else done();
  });

  // Search over package names, as you type (the index is fetched on first use).
  const search = document.getElementById("package-search");
  if (search) {
    let index = null;
    const results = document.getElementById("search-results");
    const load = () => index || (index = fetch(search.dataset.index).then((r) => r.json()));
    const show = async () => {
      const needle = search.value.trim().toLowerCase();
      results.replaceChildren();
      if (!needle) return;
      const packages = await load();
      const names = Object.keys(packages);
      const hits = names.filter((n) => n.startsWith(needle))
        .concat(names.filter((n) => !n.startsWith(needle) && n.includes(needle))).slice(0, 30);
      for (const name of hits) {
        const item = document.createElement("li");
        const tags = packages[name];
        const main = document.createElement("a");
        main.textContent = name;
        main.href = `${root}tags/${encodeURIComponent(tags[0])}/packages/${encodeURIComponent(name)}/index.html`;
        item.append(main);
        for (const tag of tags) {
          const link = document.createElement("a");
          link.textContent = tag;
          link.href = `${root}tags/${encodeURIComponent(tag)}/packages/${encodeURIComponent(name)}/index.html`;
          item.append(link);
        }
        results.append(item);
      }
      if (!hits.length) { const none = document.createElement("li"); none.textContent = "no package matches"; results.append(none); }
    };
    search.addEventListener("input", show);
    search.addEventListener("keydown", (e) => { if (e.key === "Enter") { const a = results.querySelector("a"); if (a) location.href = a.href; } });
  }

  // Facet filters with their state in the URL (?stack=e4s&target=aarch64).
  const form = document.getElementById("facets");
  const table = document.getElementById("rows");
  if (form && table) {
    const rows = Array.from(table.tBodies[0].rows);
    const selects = Array.from(form.querySelectorAll("select[data-facet]"));
    const text = form.querySelector("input[data-text]");
    const shown = document.getElementById("shown");
    const params = new URLSearchParams(location.search);
    for (const select of selects) {
      const wanted = params.get(select.name);
      if (wanted !== null) {
        if (![...select.options].some((o) => o.value === wanted)) select.add(new Option(`${wanted} (0)`, wanted));
        select.value = wanted;
      }
    }
    if (params.get("q")) text.value = params.get("q");
    const apply = () => {
      const active = selects.filter((s) => s.value).map((s) => [s.name, s.value]);
      const needle = text.value.trim().toLowerCase();
      let count = 0;
      for (const row of rows) {
        const ok = active.every(([key, value]) => (row.dataset[key] || "").split(" ").includes(value)) &&
          (!needle || row.dataset.name.toLowerCase().includes(needle));
        row.hidden = !ok;
        if (ok) count++;
      }
      shown.textContent = count;
      const next = new URLSearchParams();
      for (const [key, value] of active) next.set(key, value);
      if (needle) next.set("q", needle);
      const query = next.toString();
      history.replaceState(null, "", query ? `?${query}` : location.pathname);
    };
    form.addEventListener("input", apply);
    apply();
    document.body.dataset.ready = "1";  // filters applied: the page is interactive

    // Sortable columns.
    table.querySelectorAll("th[data-sort]").forEach((th) => {
      th.addEventListener("click", () => {
        const column = th.cellIndex, numeric = th.dataset.sort === "num";
        const down = th.dataset.dir !== "asc";
        th.dataset.dir = down ? "asc" : "desc";
        const key = (row) => numeric ? Number(row.cells[column].dataset.value) : row.cells[column].textContent.trim();
        rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (down ? 1 : -1); });
        table.tBodies[0].append(...rows);
      });
    });
  }
})();
