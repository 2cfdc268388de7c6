// cachedex: the definitions the pages share with the Python code, as pure functions on
// window.cachedex. Each has its Python twin, and both pass the same tables of cases:
//   versionKey, compareVersions   versions.version_key       tests/publish/cases/version_order.json
//   specMatches, selectSpecs      publish/facets.py          tests/publish/cases/facet_cases.json
//   selectTag                     publish/facets.select_tag  (the same cases)
//   compareCompilers              publish/facets.value_order (the same cases: its rows' compilers)
//   humanSize                     values.human_size
//   visible                       values.page_visible        tests/publish/cases/page_visible.json
"use strict";
(function () {
  // -- versions, as Spack orders them (spack.version.StandardVersion) ----------------------
  const INFINITY = ["stable", "nightly", "trunk", "head", "master", "main", "develop"];
  const PRERELEASE = new Map([["alpha", 0], ["beta", 1], ["rc", 2], ["final", 3]]);
  const FINAL = [3];
  const keys = new Map();

  // [release, prerelease]: release components are [kind, value]: a word [1, text], a
  // number [2, digits without leading zeros] (compared by length, then as text: exact
  // however long), a branch name [3, its rank].
  function versionKey(version) {
    const known = keys.get(version);
    if (known) return known;
    let text = version.trim();
    if (text.slice(1).includes("=")) text = text.slice(text.lastIndexOf("=") + 1);
    let segments = Array.from(text.matchAll(/(?:([0-9]+)|([A-Za-z]+))[_.-]*/g), (m) => [m[1] || "", m[2] || ""]);
    let prerelease = FINAL;
    const n = segments.length;
    if (n >= 3 && PRERELEASE.has(segments[n - 2][1]) && segments[n - 1][0]) {
      prerelease = [PRERELEASE.get(segments[n - 2][1]), Number(segments[n - 1][0])];
      segments = segments.slice(0, -2);
    } else if (n >= 2 && PRERELEASE.has(segments[n - 1][1])) {
      prerelease = [PRERELEASE.get(segments[n - 1][1])];
      segments = segments.slice(0, -1);
    }
    const release = segments.map(([number, word]) => {
      if (number) return [2, number.replace(/^0+(?=.)/, "")];
      const rank = INFINITY.indexOf(word);
      return rank >= 0 ? [3, rank] : [1, word];
    });
    const key = [release, prerelease];
    keys.set(version, key);
    return key;
  }

  const order = (x, y) => (x < y ? -1 : x > y ? 1 : 0);

  function compareComponents(a, b) {
    if (a[0] !== b[0]) return order(a[0], b[0]);
    if (a[0] === 2 && a[1].length !== b[1].length) return order(a[1].length, b[1].length);
    return order(a[1], b[1]);
  }

  function compareSequences(a, b, compare) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const found = compare(a[i], b[i]);
      if (found) return found;
    }
    return order(a.length, b.length);
  }

  // -1, 0 or 1 as version a is older than, equal to or newer than b.
  function compareVersions(a, b) {
    const [x, y] = [versionKey(a), versionKey(b)];
    return compareSequences(x[0], y[0], compareComponents) || compareSequences(x[1], y[1], order);
  }

  // -- facets: which specs match (see publish/facets.py) ----------------------------------
  // (runs_on: the machines that run a spec's binary; counted when named among the facets,
  // per distinct target, then added up per machine, as facets.py counts them)
  // (a compiler: the spec's own, or one of the others that built it: apple-clang its C,
  // gcc its Fortran)
  const MULTI = { stack: "stacks", variant: "variants", runs_on: "runs_on" };
  const FACETS = ["stack", "os", "target", "compiler", "platform"];
  const valuesOf = (spec, facet) =>
    facet in MULTI ? spec[MULTI[facet]] : facet === "compiler" && spec.other_compilers ? [spec.compiler, ...spec.other_compilers] : [spec[facet]];

  function specMatches(spec, filters) {
    return Object.entries(filters).every(([facet, value]) => valuesOf(spec, facet).includes(value));
  }

  function misses(spec, filters) {
    const missed = [];
    for (const [facet, value] of Object.entries(filters)) {
      if (!valuesOf(spec, facet).includes(value)) {
        missed.push(facet);
        if (missed.length === 2) break;
      }
    }
    return missed;
  }

  // A compiler by its name, then its version in Spack's order; other values by their
  // text (facets.value_order).
  const compareCompilers = (x, y) => {
    const [a, b] = [x.split("@"), y.split("@")];
    return order(a[0], b[0]) || compareVersions(a.slice(1).join("@"), b.slice(1).join("@"));
  };
  const valueOrder = (facet) => (facet === "compiler" ? compareCompilers : order);
  const sortedCounts = (counts, facet) => Object.fromEntries(Array.from(counts).sort((a, b) => valueOrder(facet)(a[0], b[0])));

  // A package page: { matches: [bool], facets: {facet: {value: specs}}, relax: {facet: specs} }.
  // needle: the Version filter in lower case (part of a version); it applies to every
  // count and stays when a filter is relaxed, as a tag page's name filter does: a spec it
  // drops counts for no option and no relax.
  // runs_on among the facets: its counts too (a spec's runs_on lists its target's machines).
  function selectSpecs(specs, filters, facets = FACETS, needle = "") {
    const counts = Object.fromEntries(facets.filter((f) => f !== "runs_on").map((facet) => [facet, new Map()]));
    const byTarget = facets.includes("runs_on") ? new Map() : null; // target -> [specs, its machines]
    const relax = Object.fromEntries(Object.keys(filters).map((facet) => [facet, 0]));
    const matches = [];
    for (const spec of specs) {
      const missed = misses(spec, filters);
      const texted = !needle || spec.version.toLowerCase().includes(needle);
      matches.push(missed.length === 0 && texted);
      if (!texted || missed.length > 1) continue;
      for (const facet in counts) {
        if (missed.length && missed[0] !== facet) continue;
        for (const value of new Set(valuesOf(spec, facet))) counts[facet].set(value, (counts[facet].get(value) || 0) + 1);
      }
      if (byTarget && (!missed.length || missed[0] === "runs_on")) {
        const found = byTarget.get(spec.target);
        if (found) found[0]++;
        else byTarget.set(spec.target, [1, spec.runs_on]);
      }
      for (const facet in relax) if (!missed.length || missed[0] === facet) relax[facet]++;
    }
    if (byTarget) {
      const machines = new Map();
      for (const [count, run] of byTarget.values()) for (const machine of run) machines.set(machine, (machines.get(machine) || 0) + count);
      counts.runs_on = machines;
    }
    const facetsOut = Object.fromEntries(facets.map((facet) => [facet, sortedCounts(counts[facet], facet)]));
    return { matches, facets: facetsOut, relax };
  }

  // A tag page, from its columns (TagColumns, columns.json): the rows of the packages with
  // a spec matching every filter, each summarizing those specs, and the counts (in
  // packages). A row's size adds the specs' sizes (exact, as the server's, the API's and
  // the package page's).
  // With lazy, a row is only {name, specs, size, sized, n, matched}: what sorting needs;
  // rowOf(page, row) makes the whole row, for the few rows a page draws (a filter over
  // 250,000 specs answers in tens of milliseconds instead of summarizing 10,000 rows).
  // facets: those counted; runs_on among them: its counts too, per distinct set of the
  // targets a package's counted specs have, then per machine (a package counts once).
  function selectTag(page, filters, needle = "", lazy = false, facets = FACETS) {
    const c = page.specs;
    const values = c.values;
    const keys = facets.filter((facet) => facet !== "runs_on");
    // The facets whose column holds the index of a set of values (a spec's stacks, its
    // compilers), and those sets.
    const setsOf = { stack: [c.stacks, c.stack_sets], compiler: [c.compiler, c.compiler_sets] };
    const tests = Object.entries(filters).map(([facet, value]) => {
      const wanted = (values[facet] || []).indexOf(value);
      const k = keys.includes(facet) ? keys.indexOf(facet) : -2; // k -2: a miss of it counts for no facet
      if (facet in setsOf) return { facet, k, holding: setsOf[facet][1].map((set) => set.includes(wanted)), of: setsOf[facet][0] };
      // runs_on: by the spec's target
      if (facet === "runs_on") return { facet, k, holding: (c.runs_on || []).map((set) => set.includes(wanted)), of: c.target };
      return { facet, k, column: c[facet], wanted };
    });
    // Per facet (in keys' order): its column, its sets (or null), counts, and the last
    // package counted for each value (a package counts once per value).
    const columns = keys.map((facet) => (facet in setsOf ? setsOf[facet][0] : c[facet]));
    const sets = keys.map((facet) => (facet in setsOf ? setsOf[facet][1] : null));
    const counts = keys.map((facet) => new Int32Array(values[facet].length));
    const seen = keys.map((facet) => new Int32Array(values[facet].length).fill(-1));
    // runs_on: the test that a miss of counts for it, the targets of a package's counted
    // specs, and packages per distinct set of them
    const countMachines = facets.includes("runs_on");
    const runsOnTest = tests.findIndex((t) => t.facet === "runs_on");
    const targetSeen = new Int32Array(countMachines ? values.target.length : 0).fill(-1);
    const targetSets = new Map();
    let targets = [];
    const relax = Object.fromEntries(tests.map((t) => [t.facet, 0]));
    const relaxSeen = tests.map(() => -1);
    const unlinked = new Set(c.unlinked || []);
    const sizes = c.size;
    const rows = [];
    let start = 0;
    for (let n = 0; n < c.names.length; n++) {
      const end = start + c.counts[n];
      if (needle && !c.names[n].toLowerCase().includes(needle)) { start = end; continue; }
      const matched = [];
      for (let i = start; i < end; i++) {
        let missed = -1, missCount = 0;
        for (let t = 0; t < tests.length; t++) {
          const test = tests[t];
          const ok = test.holding ? test.holding[test.of[i]] === true : test.column[i] === test.wanted;
          if (!ok) { missed = t; if (++missCount > 1) break; }
        }
        if (missCount > 1) continue;
        if (!missCount) matched.push(i);
        const only = missCount ? tests[missed].k : -1;
        for (let k = 0; k < columns.length; k++) {
          if (only !== -1 && only !== k) continue;
          const seenK = seen[k], countsK = counts[k];
          if (sets[k]) {
            const set = sets[k][columns[k][i]];
            for (let j = 0; j < set.length; j++) {
              const at = set[j];
              if (seenK[at] !== n) { seenK[at] = n; countsK[at]++; }
            }
          } else {
            const at = columns[k][i];
            if (seenK[at] !== n) { seenK[at] = n; countsK[at]++; }
          }
        }
        if (countMachines && (!missCount || missed === runsOnTest)) {
          const at = c.target[i];
          if (targetSeen[at] !== n) { targetSeen[at] = n; targets.push(at); }
        }
        for (let t = 0; t < tests.length; t++) {
          if ((!missCount || t === missed) && relaxSeen[t] !== n) { relaxSeen[t] = n; relax[tests[t].facet]++; }
        }
      }
      if (targets.length) {
        const key = targets.sort((a, b) => a - b).join(",");
        targetSets.set(key, (targetSets.get(key) || 0) + 1);
        targets = [];
      }
      if (matched.length) {
        const linked = !unlinked.has(n);
        if (!lazy) rows.push(summary(c, n, matched, linked));
        else {
          let size = 0, sized = 0;
          for (const i of matched) if (sizes[i] !== null) { size += sizes[i]; sized++; }
          rows.push({ name: c.names[n], specs: matched.length, size: sized ? size : null, sized, has_page: linked, n, matched });
        }
      }
      start = end;
    }
    const counted = {};
    keys.forEach((facet, k) => {
      const found = [];
      counts[k].forEach((count, at) => { if (count) found.push([values[facet][at], count]); });
      counted[facet] = sortedCounts(found, facet);
    });
    if (countMachines) counted.runs_on = machineCounts(c, targetSets);
    return { rows, facets: Object.fromEntries(facets.map((facet) => [facet, counted[facet]])), relax };
  }

  // Per machine, the packages of targetSets ("3,7" -> packages: target positions) one of
  // whose targets it runs: each distinct set's machines found once.
  function machineCounts(c, targetSets) {
    const counts = new Int32Array(c.values.runs_on.length);
    for (const [key, packages] of targetSets) {
      const machines = new Set();
      for (const at of key.split(",")) for (const machine of c.runs_on[Number(at)]) machines.add(machine);
      for (const machine of machines) counts[machine] += packages;
    }
    const found = [];
    counts.forEach((count, at) => { if (count) found.push([c.values.runs_on[at], count]); });
    return sortedCounts(found);
  }

  // The whole row of a lazy one (see selectTag).
  const rowOf = (page, row) => (row.matched ? summary(page.specs, row.n, row.matched, row.has_page) : row);

  function summary(c, n, matched, linked) {
    const v = c.values;
    const distinct = (column) => Array.from(new Set(matched.map((i) => v[column][c[column][i]]))).sort(valueOrder(column));
    const stacks = new Set(), compilers = new Set();
    for (const i of matched) for (const at of c.stack_sets[c.stacks[i]]) stacks.add(v.stack[at]);
    for (const i of matched) for (const at of c.compiler_sets[c.compiler[i]]) compilers.add(v.compiler[at]);
    let size = 0, sized = 0;
    for (const i of matched) if (c.size[i] !== null) { size += c.size[i]; sized++; }
    return {
      name: c.names[n],
      specs: matched.length,
      versions: Array.from(new Set(matched.map((i) => c.version[i]))).sort((a, b) => a - b).map((at) => v.version[at]),
      compilers: Array.from(compilers).sort(compareCompilers),
      platforms: distinct("platform"),
      oses: distinct("os"),
      targets: distinct("target"),
      stacks: Array.from(stacks).sort(order),
      size: sized ? size : null,
      sized,
      has_page: linked,
    };
  }

  // -- sizes and counts for people ---------------------------------------------------------

  // values.human_size: powers of 1000, one decimal (none for bytes); the same text as
  // Python's, whose format rounds a tie (x.25, x.75: the only ones a double holds
  // exactly) to even where toFixed rounds it up.
  function humanSize(size) {
    if (size === null || size === undefined) return "unknown";
    if (size < 1000) return `${Math.round(size)} B`;
    let value = size / 1000;
    for (const unit of ["kB", "MB", "GB"]) {
      const shown = oneDecimal(value);
      if (value < 1000 && shown !== "1000.0") return `${shown} ${unit}`; // (999,960 bytes is 1.0 MB)
      value /= 1000;
    }
    return `${oneDecimal(value)} TB`;
  }

  function oneDecimal(value) {
    if (Number.isInteger(value * 4) && !Number.isInteger(value * 2)) {
      const tenths = Math.floor(value * 10);
      return ((tenths % 2 ? tenths + 1 : tenths) / 10).toFixed(1);
    }
    return value.toFixed(1);
  }

  const formatCount = (n) => n.toLocaleString("en-US");

  // values.page_visible: a mirror's value with each character beyond ASCII that Python
  // does not call printable (one that would hide or reorder the text around it: a
  // right-to-left override, a zero-width space, a line separator, a lone surrogate)
  // written as its escape, as the pages Python writes show it.
  const HIDDEN = /[\p{C}\p{Z}]/gu;
  const escaped = (c) => {
    const code = c.codePointAt(0);
    if (code < 0x80) return c; // a page lays out ASCII's tabs and line breaks
    const hex = code.toString(16);
    if (code < 0x100) return `\\x${hex.padStart(2, "0")}`;
    return code < 0x10000 ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
  };
  const visible = (text) => text.replace(HIDDEN, escaped);

  // "1.2 GB", "unknown", or "1.2 GB (3 of 5 known)"
  function totalSize(size, sized, count) {
    if (!sized || size === null) return "unknown";
    return humanSize(size) + (sized >= count ? "" : ` (${formatCount(sized)} of ${formatCount(count)} known)`);
  }

  window.cachedex = {
    versionKey, compareVersions, compareCompilers, specMatches, selectSpecs, selectTag, rowOf, humanSize, totalSize, formatCount, visible,
    FACETS,
  };
})();
