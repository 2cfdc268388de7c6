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

  // Search as you type: package names from packages.json (fetched on first use); and
  // a query in Spack's spec syntax (hdf5+mpi %gcc@13, target=zen4) when the site is
  // served by `cachedex serve`, whose /api/search answers it. A static site has no
  // API: it says so, and searches the query's package name.
  const search = document.getElementById("package-search");
  if (search) {
    let index = null;
    let asked = 0;
    const syntax = /[@%+~=/\s^]/; // what a package name never holds, and spec syntax does
    const results = document.getElementById("search-results");
    const load = () => index || (index = fetch(search.dataset.index).then((r) => r.json()));
    const line = (text, className) => {
      const item = document.createElement("li");
      const body = document.createElement(className === "error" ? "pre" : "span");
      body.textContent = text;
      item.className = className;
      item.append(body);
      results.append(item);
    };
    const packageHits = async (needle) => {
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
      if (!hits.length) line("no package matches", "muted");
    };
    // The answer of cachedex serve's API, or null on a static site.
    const specHits = async (query) => {
      let response;
      try {
        response = await fetch(`${root}api/search?limit=30&q=${encodeURIComponent(query)}`);
      } catch (error) {
        return null;
      }
      if (!(response.headers.get("content-type") || "").includes("json")) return null;
      const body = await response.json();
      if (!response.ok) return body.error ? { error: body.error.message } : null;
      return body;
    };
    const show = async () => {
      const query = search.value.trim();
      const mine = ++asked;
      const spec = syntax.test(query);
      const answer = spec ? await specHits(query) : null;
      const needle = query.toLowerCase().split(syntax)[0];
      if (mine !== asked) return; // a newer keystroke asked since
      results.replaceChildren();
      if (!query) return;
      if (answer && answer.error) { line(answer.error, "error"); return; }
      if (answer) {
        line(`${answer.total.toLocaleString()} specs match${answer.total > answer.specs.length ? ` (the first ${answer.specs.length})` : ""}`, "muted");
        for (const s of answer.specs) {
          const item = document.createElement("li");
          const link = document.createElement("a");
          link.textContent = `${s.name}@${s.version} /${s.hash.slice(0, 7)}`;
          link.href = `${root}specs/${encodeURIComponent(s.hash.slice(0, 2))}/${encodeURIComponent(s.hash)}.html`;
          const about = document.createElement("span");
          about.textContent = ` ${s.compiler} ${s.platform}-${s.os}-${s.target} · ${s.tags.join(", ")}`;
          item.append(link, about);
          results.append(item);
        }
        return;
      }
      if (spec) line("Spec syntax needs the site served by cachedex serve; here: package names.", "muted");
      if (needle) await packageHits(needle);
    };
    search.addEventListener("input", show);
    search.addEventListener("keydown", (e) => { if (e.key === "Enter") { const a = results.querySelector("a"); if (a) location.href = a.href; } });
  }

  // Facet filters with their state in the URL (?stack=e4s&target=aarch64), and sorting.
  // A table with data-src (a tag page) holds only its first rows: the script filters and
  // sorts the page's JSON twin and shows the matches a few hundred at a time. Other
  // tables (a package's specs) are filtered in place.
  const form = document.getElementById("facets");
  const table = document.getElementById("rows");
  if (form && table) {
    const body = table.tBodies[0];
    const selects = Array.from(form.querySelectorAll("select[data-facet]"));
    const text = form.querySelector("input[data-text]");
    const shown = document.getElementById("shown");
    const more = document.getElementById("more");
    const params = new URLSearchParams(location.search);
    for (const select of selects) {
      const wanted = params.get(select.name);
      if (wanted !== null) {
        if (![...select.options].some((o) => o.value === wanted)) select.add(new Option(`${wanted} (0)`, wanted));
        select.value = wanted;
      }
    }
    if (params.get("q")) text.value = params.get("q");
    const remember = (active, needle) => {
      const next = new URLSearchParams();
      for (const [key, value] of active) next.set(key, value);
      if (needle) next.set("q", needle);
      const query = next.toString();
      history.replaceState(null, "", query ? `?${query}` : location.pathname);
    };
    const state = () => [selects.filter((s) => s.value).map((s) => [s.name, s.value]), text.value.trim().toLowerCase()];
    let sortKey = null, sortDown = true;

    if (table.dataset.src) {
      const fields = { stack: "stacks", os: "oses", target: "targets", compiler: "compilers", platform: "platforms" };
      const step = Number(table.dataset.first) || 200;
      let packages = null, matches = [], limit = step;
      const size = (n) => { let v = n, u = ["B", "kB", "MB", "GB", "TB"], i = 0; while (v >= 1000 && i < 4) { v /= 1000; i++; } return i ? `${v.toFixed(1)} ${u[i]}` : `${v} B`; };
      const cell = (row, value, cls, sortValue) => {
        const td = row.insertCell(); td.textContent = value; if (cls) td.className = cls;
        if (sortValue !== undefined) td.dataset.value = sortValue; return td;
      };
      const draw = () => {
        const rows = document.createDocumentFragment();
        for (const p of matches.slice(0, limit)) {
          const tr = document.createElement("tr");
          if (p.has_page === false) {
            tr.insertCell().textContent = p.name; // a name that cannot be a folder name has no page
          } else {
            const link = document.createElement("a");
            link.href = `packages/${encodeURIComponent(p.name)}/index.html`; link.textContent = p.name;
            tr.insertCell().append(link);
          }
          cell(tr, p.specs, "num", p.specs);
          cell(tr, p.versions.slice(0, 4).join(", ") + (p.versions.length > 4 ? " …" : ""));
          cell(tr, p.compilers.join(", "));
          cell(tr, `${p.platforms.join(", ")} / ${p.oses.join(", ")} / ${p.targets.join(", ")}`);
          cell(tr, p.stacks.join(", "), "stacks");
          cell(tr, size(p.size), "num", p.size);
          rows.append(tr);
        }
        body.replaceChildren(rows);
        more.hidden = matches.length <= limit;
        const partial = document.getElementById("partial");
        if (partial) partial.hidden = true;
      };
      const apply = () => {
        const [active, needle] = state();
        matches = packages.filter((p) => active.every(([key, value]) => p[fields[key]].includes(value)) &&
          (!needle || p.name.toLowerCase().includes(needle)));
        if (sortKey) {
          const key = (p) => p[sortKey];
          matches.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (sortDown ? 1 : -1); });
        }
        limit = step;
        shown.textContent = matches.length;
        remember(active, needle);
        draw();
      };
      more.addEventListener("click", () => { limit += step; draw(); });
      table.querySelectorAll("th[data-sort]").forEach((th) => th.addEventListener("click", () => {
        sortDown = sortKey === th.dataset.key ? !sortDown : true;
        sortKey = th.dataset.key;
        if (packages) apply();
      }));
      fetch(table.dataset.src).then((r) => r.json()).then((data) => {
        packages = data.packages;
        form.addEventListener("input", apply);
        apply();
        document.body.dataset.ready = "1";  // filters applied: the page is interactive
      });
      return;
    }

    const rows = Array.from(body.rows);
    const apply = () => {
      const [active, needle] = state();
      let count = 0;
      for (const row of rows) {
        const ok = active.every(([key, value]) => (row.dataset[key] || "").split(" ").includes(value)) &&
          (!needle || row.dataset.name.toLowerCase().includes(needle));
        row.hidden = !ok;
        if (ok) count++;
      }
      shown.textContent = count;
      remember(active, needle);
    };
    form.addEventListener("input", apply);
    apply();
    document.body.dataset.ready = "1";  // filters applied: the page is interactive

    table.querySelectorAll("th[data-sort]").forEach((th) => {
      th.addEventListener("click", () => {
        const column = th.cellIndex, numeric = th.dataset.sort === "num";
        const down = th.dataset.dir !== "asc";
        th.dataset.dir = down ? "asc" : "desc";
        const key = (row) => numeric ? Number(row.cells[column].dataset.value) : row.cells[column].textContent.trim();
        rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (down ? 1 : -1); });
        body.append(...rows);
      });
    });
  }
})();
