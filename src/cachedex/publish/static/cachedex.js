// cachedex: progressive enhancements; every page is complete without them. The shared
// definitions (version order, facet matching, sizes) are in cachedex-core.js.
"use strict";
(function () {
  const cx = window.cachedex;
  const root = document.body.dataset.root || "";
  // Text from the data (a facet's values) as the server's pages show it: see cx.visible.
  const el = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = cx.visible(String(text));
    if (className) node.className = className;
    return node;
  };

  // Copy buttons: "copied" for two seconds, said to screen readers too (a button's
  // aria-label is its name, whatever its text: the news goes through a live region).
  let said = null;
  const say = (text) => {
    if (!said) {
      said = el("p", "", "visually-hidden");
      said.setAttribute("role", "status");
      document.body.append(said);
    }
    said.textContent = text;
  };
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (!button) return;
    const label = button.dataset.label || (button.dataset.label = button.textContent);
    const done = (ok) => {
      button.classList.toggle("done", ok);
      button.textContent = ok ? "copied" : "select and copy";
      say(ok ? "copied" : "not copied: select the text and copy it");
      setTimeout(() => { button.textContent = label; button.classList.remove("done"); }, 2000);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(button.dataset.copy).then(() => done(true), () => done(false));
    else done(false);
  });

  // A focused cell of a matrix whose row names stay in view (coverage) must not sit
  // under them: its box scrolls it out from under the row's name.
  document.addEventListener("focusin", (event) => {
    const box = event.target.closest(".scroll");
    const row = box && event.target.closest("tr");
    const name = row && row.querySelector("th[scope=row]");
    if (!name || name.contains(event.target) || getComputedStyle(name).position !== "sticky") return;
    const hidden = name.getBoundingClientRect().right - event.target.getBoundingClientRect().left;
    if (hidden > 0) box.scrollLeft -= hidden + 8;
  });

  // The raw spec JSON, indented when it is first opened. Its text is re-spaced outside
  // strings, not parsed and written again: keys keep their order, numbers their digits
  // and a repeated key stays, as the index holds them. A list of plain values (a
  // target's features, a dependency's types) runs on as text does.
  const stringEnd = (text, start) => { // the quote that closes the string opened at start
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === '"') return i;
    }
    return text.length - 1;
  };
  const flatList = (text, start) => { // the end of the list at start, if it holds no list or object; else -1
    for (let i = start + 1; i < text.length && i - start < 4000; i++) {
      const c = text[i];
      if (c === '"') i = stringEnd(text, i);
      else if (c === "{" || c === "[") return -1;
      else if (c === "]") return i;
    }
    return -1;
  };
  const indentJson = (text) => {
    let out = "", depth = 0, flatUntil = -1;
    const newline = () => "\n" + "  ".repeat(depth);
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') { const end = stringEnd(text, i); out += text.slice(i, end + 1); i = end; }
      else if (i < flatUntil) { // its values run on, a new line when one grows past 80 characters
        if (c === ",") out += out.length - out.lastIndexOf("\n") > 80 ? "," + newline() + "  " : ", ";
        else if (!/\s/.test(c)) out += c;
      }
      else if (i === flatUntil) out += c;
      else if (c === "{" || c === "[") {
        const close = c === "{" ? "}" : "]";
        const next = text.slice(i + 1).match(/^\s*(.)/);
        const end = c === "[" ? flatList(text, i) : -1;
        if (next && next[1] === close) { out += c + close; i += next[0].length; }
        else if (end > 0) { flatUntil = end; out += c; }
        else { depth++; out += c + newline(); }
      } else if (c === "}" || c === "]") { depth = Math.max(0, depth - 1); out += newline() + c; }
      else if (c === ",") out += "," + newline();
      else if (c === ":") out += ": ";
      else if (!/\s/.test(c)) out += c;
    }
    return out;
  };
  document.querySelectorAll("details > pre.json").forEach((pre) => {
    pre.parentElement.addEventListener("toggle", () => {
      if (pre.parentElement.open && !pre.dataset.indented) {
        pre.dataset.indented = "1";
        pre.textContent = indentJson(pre.textContent);
      }
    });
  });

  // Phones: the filters start folded unless some are active (a name filter, runs_on too).
  const filtersBox = document.getElementById("filters-box");
  if (filtersBox && window.matchMedia("(max-width: 640px)").matches && !/[?&][a-z_]+=[^&]/.test(location.search)) {
    filtersBox.open = false;
  }

  // Why the site's data did not come: a page opened from a file may not read others.
  const unreadable = (what, error) => `${what} could not be loaded (${error && error.message ? error.message : error})` +
    (location.protocol === "file:" ? ": a page opened from a file cannot read the site's data; serve the folder with a web server (the README says how)." : ".");

  // Is this site served by `cachedex serve` (it has an API), or a static copy? Asked once.
  let live = null;
  // Served by cachedex, or a static copy? Each has live.json, which says.
  const isLive = () => live || (live = fetch(`${root}live.json`)
    .then((r) => (r.ok ? r.json() : {}), () => ({}))
    .then((answer) => answer.live === true, () => false));

  // A spec page served by cachedex serve links to the search of everything depending on
  // it (its list stops at 300; the search narrows by name, variant or arch). A static
  // copy's search finds names only: no link there.
  const dependents = document.getElementById("dependents");
  const specHash = document.getElementById("hash");
  // (Only when a dependent links or runs it: the search follows those edges alone.)
  if (dependents && specHash && dependents.dataset.linkRun !== "0") {
    isLive().then((served) => {
      if (!served) return;
      const full = specHash.textContent.trim();
      const link = el("a", `^/${full.slice(0, 7)}`);
      link.href = `${root}search.html?q=${encodeURIComponent(`^/${full}`)}`;
      link.id = "dependents-search";
      const note = el("p", "Every spec that needs it to link or run, directly or through others, searchable by name, variant or arch: ", "muted");
      note.append(link);
      dependents.after(note);
    });
  }

  // -- the search box: package names as you type; a spec query goes to the search page --
  const search = document.getElementById("package-search");
  if (search) {
    let index = null, asked = 0;
    const syntax = /[@%+~=/\s^]/; // what a package name never holds, and spec syntax does
    const results = document.getElementById("search-results");
    const hint = document.getElementById("search-hint");
    const load = () => index || (index = fetch(search.dataset.index).then((r) => r.json()));
    const line = (text, className) => results.append(el("li", text, className));
    // The name a query starts with, if it does: not the key of "target=:zen3".
    const nameIn = (query) => {
      const head = query.toLowerCase().split(syntax)[0];
      return query.charAt(head.length) === "=" ? "" : head;
    };
    const matching = (packages, needle) => {
      const names = Object.keys(packages);
      return names.filter((n) => n.startsWith(needle)).concat(names.filter((n) => !n.startsWith(needle) && n.includes(needle)));
    };
    const packageHits = async (needle, mine) => {
      let packages;
      try {
        packages = await load();
      } catch (error) {
        index = null; // (asked again at the next keystroke)
        if (mine === asked) line(unreadable("The list of package names", error), "error");
        return;
      }
      if (mine !== asked) return; // a newer keystroke asked meanwhile: its list, not this one
      const all = matching(packages, needle);
      for (const name of all.slice(0, 30)) {
        const item = el("li");
        const tags = packages[name];
        const main = el("a", name);
        main.href = `${root}tags/${encodeURIComponent(tags[0])}/packages/${encodeURIComponent(name)}/index.html`;
        item.append(main);
        for (const tag of tags.slice(0, 8)) {
          const link = el("a", tag);
          link.href = `${root}tags/${encodeURIComponent(tag)}/packages/${encodeURIComponent(name)}/index.html`;
          item.append(link);
        }
        if (tags.length > 8) item.append(el("span", ` and ${tags.length - 8} more tags`, "muted"));
        results.append(item);
      }
      if (all.length > 30) line(`and ${cx.formatCount(all.length - 30)} more names: type more of the name`, "muted");
      if (!all.length) line("no package name matches", "muted");
      say(all.length ? `${cx.formatCount(all.length)} package name${all.length === 1 ? "" : "s"} match` : "no package name matches");
    };
    const explain = (served) => {
      if (!hint) return;
      hint.textContent = served
        ? "Package names as you type; press Enter to search specs in Spack's syntax (hdf5+mpi %gcc@13, py-keras ^py-jax@0.4)."
        : "This copy of the site is static: it searches package names only. Spec syntax (hdf5+mpi target=x86_64:) needs the site served by cachedex serve.";
    };
    search.addEventListener("focus", () => isLive().then(explain), { once: true });
    const show = async () => {
      const query = search.value.trim();
      const mine = ++asked;
      const spec = syntax.test(query);
      const served = spec ? await isLive() : false;
      const needle = nameIn(query);
      if (mine !== asked) return; // a newer keystroke asked since
      results.replaceChildren();
      if (!query) return;
      if (spec && served) {
        const item = el("li");
        const link = el("a", `Search specs: ${query}`);
        // As Enter would: in the tag and stack the form has chosen, if it has them.
        const scope = ["tag", "stack"].map((name) => search.form.elements[name]).filter((field) => field && field.value);
        link.href = `${root}search.html?q=${encodeURIComponent(query)}` + scope.map((field) => `&${field.name}=${encodeURIComponent(field.value)}`).join("");
        item.append(link, el("span", " (Enter)", "muted"));
        results.append(item);
      } else if (spec) {
        line(`A static copy of the site searches package names only; spec syntax needs cachedex serve.${needle ? " Names:" : ""}`, "muted");
      }
      if (needle) await packageHits(needle, mine);
    };
    search.addEventListener("input", show);
    search.form.addEventListener("submit", async (event) => {
      // Enter: a spec query on a live site goes to the search page; a name to its package.
      // Cancelled at once: a cancel after an await comes too late while live.json is asked.
      event.preventDefault();
      const query = search.value.trim();
      if (syntax.test(query) && (await isLive())) {
        search.form.submit();
        return;
      }
      if (await isLive()) {
        // A name typed in capitals (HDF5) searches the package its list showed (hdf5).
        const packages = await load();
        if (!(query in packages) && query.toLowerCase() in packages) search.value = query.toLowerCase();
        search.form.submit();
        return;
      }
      // A static copy: the first name matching, even if its list is not drawn yet.
      const packages = await load().catch((error) => {
        index = null;
        results.replaceChildren(el("li", unreadable("The list of package names", error), "error"));
        return {};
      });
      const needle = nameIn(query);
      const [name] = needle ? matching(packages, needle) : [];
      if (!name) return;
      const chosen = search.form.elements.tag ? search.form.elements.tag.value : "";
      const tag = packages[name].includes(chosen) ? chosen : packages[name][0]; // the tag chosen, if it has it
      location.href = `${root}tags/${encodeURIComponent(tag)}/packages/${encodeURIComponent(name)}/index.html`;
    });
    // The stacks to choose from are the chosen tag's: a stack of another tag is no scope.
    const stackSelect = search.form.elements.stack;
    const tagSelect = search.form.elements.tag;
    if (stackSelect && tagSelect && stackSelect.dataset.stacks) {
      const stacksOf = JSON.parse(stackSelect.dataset.stacks);
      tagSelect.addEventListener("change", () => {
        const keep = stackSelect.value;
        const stacks = stacksOf[tagSelect.value] || [];
        stackSelect.replaceChildren(new Option("every stack", ""), ...stacks.map((name) => new Option(cx.visible(name), name)));
        stackSelect.value = stacks.includes(keep) ? keep : "";
      });
    }
    const askedBy = new URLSearchParams(location.search), asked0 = askedBy.get("q");
    if (asked0 && !search.value) search.value = asked0; // a static search page, asked by URL
    // and its tag (Enter opens the package in it), as the form sent it
    const askedTag = askedBy.get("tag");
    if (tagSelect && askedTag && !tagSelect.value && [...tagSelect.options].some((o) => o.value === askedTag)) {
      tagSelect.value = askedTag;
    }
    // A static search page asked by URL lists the names; a live one has its results below.
    if (search.value) isLive().then((served) => { if (!served) show(); });
  }

  // -- sortable tables: a button in each sortable header, aria-sort on it --
  const sorter = (table, apply) => {
    // A table shown as cards on a phone hides its header: its buttons leave the Tab order
    // there (focus would land on what cannot be seen).
    if (table.classList.contains("cards") && window.matchMedia) {
      const narrow = window.matchMedia("(max-width: 640px)");
      const place = () => table.querySelectorAll("th button.sort").forEach((button) => {
        if (narrow.matches) button.tabIndex = -1; else button.removeAttribute("tabindex");
      });
      place();
      narrow.addEventListener("change", place);
    }
    const order = (th, direction) => {
      table.querySelectorAll("th[aria-sort]").forEach((other) => other.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", direction);
      apply(th.dataset.key, direction === "descending" ? -1 : 1);
    };
    const headers = [...table.querySelectorAll("th[data-key]")].filter((th) => th.querySelector("button.sort"));
    headers.forEach((th) => th.querySelector("button.sort").addEventListener("click", () => {
      const current = th.getAttribute("aria-sort");
      // A number or a version sorts largest first on its first click; text A to Z.
      const first = th.classList.contains("num") || th.dataset.sort === "version" ? "descending" : "ascending";
      const next = current ? (current === "ascending" ? "descending" : "ascending") : first;
      // The order goes into the URL beside the filters (?sort=-size: largest first), so
      // that a shared link or a reload shows the rows as they were left.
      sortAsked = (next === "descending" ? "-" : "") + th.dataset.key;
      order(th, next);
      keepInUrl(Object.fromEntries(new URLSearchParams(location.search)));
    }));
    // (a key this table does not sort by, as a hand-typed URL may ask, is left alone)
    const asked = headers.find((th) => th.dataset.key === sortAsked.replace(/^-/, ""));
    if (asked) order(asked, sortAsked.startsWith("-") ? "descending" : "ascending");
  };
  // The rows' order a page was opened with (?sort=version, ?sort=-size), then the latest
  // chosen; the script alone reads it (a server's page is written in its own order).
  let sortAsked = new URLSearchParams(location.search).get("sort") || "";
  // A URL's parameters with that order (as a filter changed, or a way out of an empty
  // page, keeps it), then the page's own URL made so.
  const sorted = (params) => {
    const { sort, ...rest } = params;
    return sortAsked ? { ...rest, sort: sortAsked } : rest;
  };
  const keepInUrl = (params) => {
    const q = new URLSearchParams(sorted(params)).toString();
    // (the #fragment stays: a link to a package page's #coverage lands there)
    history.replaceState(null, "", (q ? `?${q}` : location.pathname) + location.hash);
  };

  // The live site's environment check: the chosen spack.lock sent to /api/reuse, its
  // answer shown as `cachedex reuse` prints it (every value as text, never as markup).
  const reuse = document.getElementById("reuse-form");
  if (reuse) {
    reuse.querySelectorAll("[data-needs-script]").forEach((button) => { button.disabled = false; });
    const out = document.getElementById("reuse-result");
    const specLink = (hash) => {
      const a = el("a", "/" + hash.slice(0, 7));
      a.href = `${reuse.dataset.root}specs/${hash.slice(0, 2)}/${hash}.html`;
      return a;
    };
    const said = (d) => `${d.what} ${d.cached || "(none)"} (yours ${d.wanted || "(none)"}${d.runs ? "; it runs on " + d.wanted : ""})`;
    const missingItem = (m, tag) => {
      const li = el("li");
      li.append(el("span", `${m.name}@${m.version} /${m.hash.slice(0, 7)}${m.root ? " (root)" : ""}: `));
      if (!m.nearest) li.append(el("span", `no build of ${m.name} in ${tag}`));
      else {
        li.append("nearest ", specLink(m.nearest.hash));
        if (m.nearest.differences.length) li.append(el("span", ", " + m.nearest.differences.map(said).join("; ")));
      }
      return li;
    };
    const counted = (n, noun) => `${cx.formatCount(n)} ${noun}${n === 1 ? "" : "s"}`; // as values.counted
    const show = (report) => {
      const developed = report.developed;
      const parts = [el("p", `${counted(report.specs, "spec")}, ${counted(report.roots, "root")}; ` +
        `${cx.formatCount(report.external)} external (never in a build cache)` +
        (developed.length ? `; ${cx.formatCount(developed.length)} developed locally (always built from source)` : "") +
        ".", "lead")];
      const table = el("table");
      table.id = "reuse-tags";
      const head = table.createTHead().insertRow();
      for (const name of ["Tag", "Stack", "Binaries", "To build", "Download"]) {
        head.append(el("th", name, name === "Tag" || name === "Stack" ? "" : "num"));
      }
      const body = table.createTBody();
      for (const row of report.tags) {
        const tr = body.insertRow();
        const link = el("a", row.tag);
        link.href = `${reuse.dataset.root}tags/${encodeURIComponent(row.tag)}/index.html`;
        tr.insertCell().append(link);
        tr.insertCell().append(cx.visible(row.stack));
        const number = (text) => { const cell = tr.insertCell(); cell.className = "num"; cell.append(text); };
        number(`${cx.formatCount(row.cached)} of ${cx.formatCount(row.needed)}`);
        number(cx.formatCount(row.needed - row.cached));
        number(row.cached ? cx.totalSize(row.size, row.sized, row.cached) : "-");
      }
      const scroll = el("div", undefined, "scroll"); // (a phone scrolls the table, not the page)
      scroll.tabIndex = 0; // (and keys scroll it too)
      scroll.setAttribute("role", "region");
      scroll.setAttribute("aria-label", "Binaries by tag");
      scroll.append(table);
      parts.push(scroll);
      for (const row of report.tags.filter((r) => r.rewired)) { // (as cachedex reuse says it)
        parts.push(el("p", `${row.tag}: ${counted(row.rewired, "spliced spec")} from the binary of the spec each was ` +
          "spliced from (Spack installs it so, rewired)", "rewired"));
      }
      // (as cachedex reuse lists them: no nearest build, Spack takes none from a cache)
      if (developed.length) {
        parts.push(el("p", `Developed locally (${cx.formatCount(developed.length)}): Spack builds each from its source, ` +
          "never from a build cache:"));
        const list = el("ul", undefined, "developed");
        list.append(...developed.map((d) => el("li", `${d.name}@${d.version} /${d.hash.slice(0, 7)}${d.root ? " (root)" : ""}`)));
        parts.push(list);
      }
      const best = report.tags[0];
      const others = developed.length ? " not developed locally" : "";
      if (!best) parts.push(el("p", "The catalog has no tags yet: nothing to compare with."));
      else if (!report.specs) parts.push(el("p", "The environment has no spec.")); // (as cachedex reuse says)
      else if (!best.missing.length && best.cached) parts.push(el("p", `${best.tag} has a binary of every spec of the environment${others}.`));
      else if (!best.needed) {
        const apart = developed.length ? "external or developed locally" : "external";
        parts.push(el("p", `No spec of the environment comes from a build cache: every one is ${apart}.`));
      } else {
        const causes = best.missing.filter((m) => !m.follows), follow = best.missing.filter((m) => m.follows);
        parts.push(el("h2", `To build from source with ${best.tag}: ${counted(best.missing.length, "spec")}`));
        if (causes.length) {
          parts.push(el("p", `Not cached as locked (${cx.formatCount(causes.length)}), each with the nearest cached build and what differs:`));
          const list = el("ul", undefined, "causes");
          list.append(...causes.map((m) => missingItem(m, best.tag)));
          parts.push(list);
        }
        if (follow.length) {
          parts.push(el("p", `Built because a dependency above is built (${cx.formatCount(follow.length)}):`));
          parts.push(el("p", follow.map((m) => `${m.name}@${m.version}`).join(", "), "follows"));
        }
      }
      out.replaceChildren(...parts);
    };
    const failed = (message) => {
      const p = el("p", message, "error");
      p.setAttribute("role", "alert");
      out.replaceChildren(p);
    };
    // Only the newest check is drawn: an answer to an earlier one (another tag, say)
    // that comes late is dropped, and its request stopped.
    let asking = null;
    reuse.addEventListener("submit", async (event) => {
      event.preventDefault();
      const file = reuse.elements.lockfile.files[0];
      if (!file) return;
      const tag = reuse.elements.tag.value;
      if (asking) asking.abort();
      const mine = (asking = new AbortController());
      out.replaceChildren(el("p", `Checking ${file.name} ...`));
      out.setAttribute("aria-busy", "true");
      try {
        const answer = await fetch(reuse.dataset.api + (tag ? "?tag=" + encodeURIComponent(tag) : ""), {
          method: "POST",
          body: file,
          signal: mine.signal,
        });
        // A proxy in front may answer in HTML (nginx's 413 for a body over its limit).
        const json = (answer.headers.get("content-type") || "").includes("json");
        const report = json ? await answer.json() : null;
        if (mine !== asking) return;
        if (answer.ok && report) show(report);
        else if (report && report.error) failed(report.error.message);
        else if (answer.status === 413) failed(`${file.name} is larger than the server (or a proxy in front of it) takes (413).`);
        else failed(`The server answered ${answer.status} ${answer.statusText}.`);
      } catch (error) {
        if (mine === asking && error.name !== "AbortError") failed(`The server did not answer: ${error}`);
      } finally {
        if (mine === asking) {
          asking = null;
          out.removeAttribute("aria-busy");
        }
      }
    });
  }

  const form = document.getElementById("facets");
  const table = document.getElementById("rows");
  if (!form || !table) return;
  const selects = Array.from(form.querySelectorAll("select[data-facet]"));
  // (runs_on on a page the server wrote without its counts has none)
  const counted = selects.filter((s) => !("uncounted" in s.dataset));
  const text = form.querySelector("input[data-text]");
  const shown = document.getElementById("shown");
  const shownSpecs = document.getElementById("shown-specs");
  const empty = document.getElementById("empty");
  const apply = form.querySelector("[data-apply]");
  if (apply) apply.hidden = true; // the script applies each change at once
  const params = new URLSearchParams(location.search);
  for (const select of selects) {
    let wanted = params.get(select.name);
    // (?variant=+cuda typed by hand: a query's "+" is a space; as the server reads it)
    if (select.name === "variant" && wanted && wanted.startsWith(" ")) wanted = `+${wanted.slice(1)}`;
    if (wanted) {
      // (a value the page does not list: none of its specs has it, counted 0; a machine it
      // does not list, none archspec knows to run them, is shown without a count, as
      // _facets.html writes it)
      if (![...select.options].some((o) => o.value === wanted)) {
        const uncounted = !counted.includes(select) || select.name === "runs_on";
        const option = new Option(uncounted ? cx.visible(wanted) : `${cx.visible(wanted)} (0)`, wanted);
        if (uncounted) option.dataset.uncounted = "";
        select.add(option);
      }
      select.value = wanted;
    }
  }
  if (params.get("q")) text.value = params.get("q");
  // [facet filters, the name (or version) filter in lower case to match, as typed for the URL]
  const state = () => [Object.fromEntries(selects.filter((s) => s.value).map((s) => [s.name, s.value])),
    text.value.trim().toLowerCase(), text.value.trim()];
  const query = (filters) => { const q = new URLSearchParams(filters).toString(); return q ? `?${q}` : ""; };
  const summary = document.querySelector("#filters-box > summary");
  // The links up to the tag's page carry its filters (not a package's variant), as the
  // server writes them.
  const crumbs = document.querySelectorAll("a[data-carry]");
  // The footer's JSON twin: a live server's filters it as the page is (a static one's is the whole page).
  const twin = document.querySelector("footer a[href^='index.json']");
  const remember = (filters, typed) => {
    const next = typed ? { ...filters, q: typed } : filters;
    keepInUrl(next); // (with the rows' order, which the JSON twin does not take)
    // (it kept the filters the page was opened with, and answered for those)
    if (twin) isLive().then((served) => { if (served) twin.href = `index.json${query(next)}`; });
    const up = { ...filters };
    delete up.variant;
    crumbs.forEach((link) => { link.href = link.dataset.carry + query(up); });
    // On a phone the box is folded: its heading is what says filters are on.
    const active = Object.keys(filters).length + (typed ? 1 : 0);
    if (summary) summary.textContent = active ? `Filters (${active})` : "Filters";
  };
  // A page opened at a #fragment (a package page's #coverage): there once filtered, as
  // the rows above it may have moved it.
  const landed = () => {
    let id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (error) { /* a malformed escape (#%E0): the id as written */ }
    const target = id && document.getElementById(id);
    if (target) target.scrollIntoView();
  };
  // Each select's options, their counts with the other filters applied; none disabled
  // that is chosen.
  const recount = (facets) => {
    for (const select of counted) {
      const counts = facets[select.name] || {};
      for (const option of select.options) {
        if (!option.value || "uncounted" in option.dataset) continue;
        const count = counts[option.value] || 0;
        option.textContent = `${cx.visible(option.value)} (${cx.formatCount(count)})`;
        option.disabled = !count && option.value !== select.value;
      }
    }
  };
  // An empty result says so, and offers each filter's removal that finds something, with
  // what it finds, as _empty.html writes it. Each count was made with the name (or
  // Version) filter applied: its link keeps it. The text box alone may empty it: its drop
  // (found by withoutText()) is offered too when it finds something. When no removal
  // finds anything, it says so, and offers clearing every filter (everything() finds).
  const explainEmpty = (count, filters, relax, noun, needle, withoutText, everything) => {
    empty.hidden = count > 0;
    if (count) return;
    const many = (n) => `${cx.formatCount(n)} ${n === 1 ? noun.slice(0, -1) : noun}`;
    const list = empty.querySelector("#relax");
    list.replaceChildren();
    const found = needle ? withoutText() : 0;
    if (found) {
      const item = el("li", "Without ");
      const link = el("a", many(found));
      link.href = `index.html${query(sorted(filters))}`;
      const label = text.closest("label").firstChild.textContent.trim(); // Name, Version
      item.append(el("code", `${label} "${text.value.trim()}"`), ": ", link);
      list.append(item);
    }
    for (const [facet, found] of Object.entries(relax)) {
      if (!found) continue; // (a link to another empty page is no way on)
      const item = el("li", "Without ");
      const rest = { ...filters };
      delete rest[facet];
      if (needle) rest.q = needle;
      const link = el("a", many(found));
      link.href = `index.html${query(sorted(rest))}`;
      item.append(el("code", `${facet}=${filters[facet]}`), ": ", link);
      list.append(item);
    }
    list.hidden = !list.children.length;
    const none = empty.querySelector("#no-relax");
    none.hidden = !list.hidden || (!needle && !Object.keys(filters).length);
    if (none.hidden) return;
    none.replaceChildren("Removing any one of these filters finds nothing either.");
    const all = everything();
    if (all) {
      const link = el("a", "Clear all filters");
      link.href = `index.html${query(sorted({}))}`;
      link.id = "clear-filters";
      none.append(" ", link, `: ${many(all)}.`);
    }
  };

  if (table.dataset.src) tagTable(); else specTable();

  // -- a tag page: columns.json holds every spec; the table shows the matching packages --
  function tagTable() {
    const body = table.tBodies[0];
    const more = document.getElementById("more");
    const step = Number(table.dataset.first) || 200;
    let page = null, rows = [], limit = step, sortKey = "name", sortDir = 1;
    const chips = (values, count) => { // as cells.py's: "+N" opens on the rest
      const td = el("td", values.slice(0, count).join(", "));
      if (values.length > count) {
        const extra = el("details", undefined, "more");
        const summary = el("summary", `+${values.length - count}`);
        summary.append(el("span", " more", "visually-hidden"));
        extra.append(summary, cx.visible(values.slice(count).join(", ")));
        td.append(" ", extra);
      }
      return td;
    };
    const draw = (filters) => {
      const carry = query(filters);
      const fragment = document.createDocumentFragment();
      for (const p of rows.slice(0, limit).map((row) => cx.rowOf(page, row))) {
        const tr = el("tr");
        const name = el("td", undefined, "name");
        if (p.has_page === false) name.textContent = cx.visible(p.name); // a name that cannot be a folder name has no page
        else {
          const link = el("a", p.name);
          link.href = `packages/${encodeURIComponent(p.name)}/index.html${carry}`;
          name.append(link);
        }
        const cells = [
          name, el("td", cx.formatCount(p.specs), "num"), chips(p.versions, 3), chips(p.compilers, 2), chips(p.oses, 2),
          chips(p.targets, 3), chips(p.stacks.filter((s) => s !== "root"), 2), el("td", cx.totalSize(p.size, p.sized, p.specs), "num size"),
        ];
        ["", "specs", "versions", "compilers", "os", "targets", "stacks", "size"].forEach((label, i) => { if (label) cells[i].dataset.label = label; });
        cells[6].classList.add("stacks");
        tr.append(...cells);
        fragment.append(tr);
      }
      body.replaceChildren(fragment);
      more.hidden = rows.length <= limit;
      const partial = document.getElementById("partial");
      if (partial) partial.hidden = true;
    };
    const run = () => {
      const [filters, needle, typed] = state();
      const chosen = cx.selectTag(page, filters, needle, true, counted.map((s) => s.name));
      rows = chosen.rows;
      if (sortKey !== "name") {
        const key = sortKey === "size" ? (p) => (p.size === null ? -1 : p.size) : (p) => p[sortKey];
        rows.sort((a, b) => (key(a) - key(b)) * sortDir || (a.name < b.name ? -1 : 1));
      } else if (sortDir < 0) rows.reverse();
      limit = step;
      shown.textContent = cx.formatCount(rows.length);
      const specs = rows.reduce((n, row) => n + row.specs, 0); // (what a coverage count links to)
      if (shownSpecs) shownSpecs.textContent = ` (${cx.formatCount(specs)} spec${specs === 1 ? "" : "s"})`;
      recount(chosen.facets);
      explainEmpty(rows.length, filters, chosen.relax, "packages", needle, () => cx.selectTag(page, filters, "", true).rows.length,
        () => page.tag.packages);
      remember(filters, typed);
      draw(filters);
    };
    more.addEventListener("click", () => {
      const drawn = body.rows.length, focused = document.activeElement === more;
      limit += step;
      draw(state()[0]);
      // The last rows drawn hide the button: its focus goes to the first of them, not to
      // the page's start (the next Tab would skip them).
      const first = more.hidden && focused ? body.rows[drawn] : null;
      if (first) {
        const link = first.querySelector("a");
        if (link) link.focus();
        else { first.tabIndex = -1; first.focus(); }
      }
    });
    sorter(table, (key, dir) => { sortKey = key; sortDir = dir; if (page) run(); });
    form.addEventListener("submit", (event) => event.preventDefault());
    // Until the tag's data has come, the rows are the unfiltered ones the server wrote:
    // filters the URL asks for say they are on their way.
    const status = el("p", "", "muted");
    status.id = "load-status";
    status.setAttribute("role", "status");
    form.append(status);
    const [asked, , askedText] = state();
    if (Object.keys(asked).length || askedText) status.textContent = "Loading the tag's specs to apply the filters ...";
    loadTwin(table.dataset.src).then((data) => {
      page = data;
      status.remove();
      form.addEventListener("input", run);
      run();
      landed();
      document.body.dataset.ready = "1"; // filters applied: the page is interactive
    }, (error) => {
      status.className = "error";
      status.setAttribute("role", "alert");
      status.textContent = unreadable("The filters need this tag's data, which", error) + " The rows below are unfiltered.";
      if (apply) apply.hidden = false; // (a server that applies them may be behind this page)
      document.body.dataset.ready = "1";
    });
  }

  // The tag's JSON: its gzipped copy if the host has one (a static host may not compress).
  async function loadTwin(src) {
    if (typeof DecompressionStream === "function") {
      try {
        const response = await fetch(`${src}.gz`);
        if (response.ok) {
          const bytes = new Uint8Array(await response.arrayBuffer());
          if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
            const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
            return JSON.parse(await new Response(stream).text());
          }
          return JSON.parse(new TextDecoder().decode(bytes)); // the host decompressed it already
        }
      } catch (error) { /* fall back to the plain file */ }
    }
    const response = await fetch(src);
    if (!response.ok) throw new Error(`${src}: ${response.status} ${response.statusText}`);
    return response.json();
  }

  // -- a package page: its specs are all in the table; the filters hide rows --
  function specTable() {
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const runsOn = JSON.parse(table.dataset.runsOn || "{}"); // target -> the machines that run it
    const shared = JSON.parse(table.dataset.sharedVariants || "[]"); // every spec's: a filter on one keeps them all
    const specs = rows.map((row) => ({
      version: row.dataset.version,
      stacks: JSON.parse(row.dataset.stacks || "[]"), variants: JSON.parse(row.dataset.variants || "[]").concat(shared),
      os: row.dataset.os, target: row.dataset.target, compiler: row.dataset.compiler, platform: row.dataset.platform,
      other_compilers: JSON.parse(row.dataset.otherCompilers || "[]"),
      runs_on: runsOn[row.dataset.target] || [row.dataset.target],
    }));
    const facets = counted.map((s) => s.name);
    const run = () => {
      const [filters, needle, typed] = state();
      const chosen = cx.selectSpecs(specs, filters, facets, needle);
      let count = 0;
      rows.forEach((row, i) => {
        row.hidden = !chosen.matches[i];
        count += chosen.matches[i];
      });
      shown.textContent = cx.formatCount(count);
      recount(chosen.facets);
      const withoutText = () => cx.selectSpecs(specs, filters, facets).matches.filter(Boolean).length;
      explainEmpty(count, filters, chosen.relax, "specs", typed, withoutText, () => specs.length); // (the Version box as typed, as the server's links)
      remember(filters, typed);
    };
    form.addEventListener("submit", (event) => event.preventDefault());
    form.addEventListener("input", run);
    run();
    landed();
    sorter(table, (key, dir) => {
      const value = {
        version: (a, b) => cx.compareVersions(a.dataset.version, b.dataset.version),
        size: (a, b) => Number(a.dataset.size || -1) - Number(b.dataset.size || -1),
        // A compiler's name, then its version in Spack's order (as text, gcc@13 came before gcc@7)
        compiler: (a, b) => cx.compareCompilers(a.dataset.compiler, b.dataset.compiler),
      }[key];
      body.append(...rows.slice().sort((a, b) => value(a, b) * dir));
    });
    document.body.dataset.ready = "1"; // filters applied: the page is interactive
  }

})();
