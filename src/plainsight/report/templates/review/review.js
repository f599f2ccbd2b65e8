// The review page. Corpus text only ever reaches the page through textContent, never innerHTML.
"use strict";
(function () {
  const manifest = JSON.parse(document.getElementById("manifest").textContent);
  const DATA = manifest.data_global;
  const PAGE_SIZE = 25;
  const STORE = "plainsight-review/" + manifest.dataset + "/" + manifest.setting + "/" + manifest.idset +
    "/" + manifest.fingerprint;
  const LEAK_FLAGS = manifest.leak_flags;
  const LEAK_CLASSES = {
    source_specific: "source-specific: no real segment outside its source holds it",
    common: "common: other real segments hold it too",
  };
  const state = { corpus: null, records: [], shown: [], page: 0, selected: null };
  const $ = (id) => document.getElementById(id);

  // --- small helpers ----------------------------------------------------------------------------
  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function say(text, isError) {
    const line = $("message");
    line.textContent = text;
    line.className = isError ? "error" : "";
  }

  // Offsets from the build count code points; JavaScript strings count UTF-16 units.
  function slicer(text) {
    if (!/[\uD800-\uDFFF]/.test(text)) return (start, end) => text.slice(start, end);
    const points = Array.from(text);
    return (start, end) => points.slice(start, end).join("");
  }

  function codePoints(text) { return /[\uD800-\uDFFF]/.test(text) ? Array.from(text).length : text.length; }

  // Text with the given spans ([start, end, className, title, value]) as <mark>s, the rest as text nodes.
  function renderSpans(container, text, spans) {
    container.textContent = "";
    const slice = slicer(text);
    let at = 0;
    spans.slice().sort((a, b) => a[0] - b[0]).forEach(([start, end, className, title, value]) => {
      if (start < at) return;
      container.appendChild(document.createTextNode(slice(at, start)));
      const mark = element("mark", slice(start, end), className);
      if (title) mark.title = title;
      if (value) mark.addEventListener("click", () => lookUp(value));
      container.appendChild(mark);
      at = end;
    });
    container.appendChild(document.createTextNode(slice(at, codePoints(text))));
  }

  // Data files are scripts that assign to a global: file:// pages may load scripts but not fetch JSON.
  function loadData(name) {
    window[DATA] = window[DATA] || {};
    if (window[DATA][name] !== undefined) return Promise.resolve(window[DATA][name]);
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "data/" + name + ".js";
      script.onload = () => resolve(window[DATA][name]);
      script.onerror = () => reject(new Error("data/" + name + ".js could not be loaded"));
      document.head.appendChild(script);
    });
  }

  // --- comments in localStorage -----------------------------------------------------------------
  function comments() {
    try { return JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (error) { return {}; }
  }

  function saveComments(all) { localStorage.setItem(STORE, JSON.stringify(all)); }

  function commentKey(corpusKey, index) { return corpusKey + "/" + index; }

  // --- the corpus list --------------------------------------------------------------------------
  function flagged(record, flag) {
    if (flag === "regenerated") return record.flags.regenerated > 0;
    return Boolean(record.flags[flag]);
  }

  function badges(record) {
    const cell = element("td");
    manifest.flags.filter((flag) => flagged(record, flag)).forEach((flag) => {
      const label = flag === "regenerated" ? "regenerated ×" + record.flags.regenerated : flag.replace("_", " ");
      cell.appendChild(element("span", label, "badge " + flag));
    });
    return cell;
  }

  const SORTS = {
    index: (a, b) => a.i - b.i,
    cosine: (a, b) => (b.cosine ?? -2) - (a.cosine ?? -2) || a.i - b.i,
    longest: (a, b) => (b.longest ?? -1) - (a.longest ?? -1) || a.i - b.i,
    words: (a, b) => b.words - a.words || a.i - b.i,
    regenerated: (a, b) => b.flags.regenerated - a.flags.regenerated || a.i - b.i,
  };

  function matchesFilters(record, stored) {
    const wanted = Array.from(document.querySelectorAll("input[name=flag]:checked")).map((box) => box.value);
    if (wanted.some((flag) => !flagged(record, flag))) return false;
    if ($("only-leaking").checked && !LEAK_FLAGS.some((flag) => record.flags[flag])) return false;
    const verdict = $("verdict-filter").value;
    const given = (stored[commentKey(state.corpus, record.i)] || {}).verdict || "";
    if (verdict === "-" ? given !== "" : verdict && given !== verdict) return false;
    const words = $("search").value.trim().toLowerCase();
    return !words || record.text.toLowerCase().includes(words);
  }

  function refreshList() {
    const stored = comments();
    state.shown = state.records.filter((record) => matchesFilters(record, stored)).sort(SORTS[$("sort").value]);
    const pages = Math.max(1, Math.ceil(state.shown.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const body = document.querySelector("#generations tbody");
    body.textContent = "";
    state.shown.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE).forEach((record) => {
      const row = element("tr", null, "generation-row" + (record.i === state.selected ? " selected" : ""));
      row.dataset.index = record.i;
      const verdict = (stored[commentKey(state.corpus, record.i)] || {}).verdict || "";
      [record.i, record.range, record.words].forEach((value) => row.appendChild(element("td", value)));
      row.appendChild(badges(record));
      row.appendChild(element("td", record.cosine === null ? "—" : record.cosine.toFixed(3)));
      row.appendChild(element("td", record.longest === null ? "—" : record.longest));
      row.appendChild(element("td", verdict, "verdict"));
      row.addEventListener("click", () => showGeneration(state.corpus, record.i));
      body.appendChild(row);
    });
    $("page-info").textContent = "page " + (state.page + 1) + " of " + pages + " · " + state.shown.length +
      " of " + state.records.length + " generations";
  }

  function openCorpus(key) {
    const corpus = manifest.corpora.find((c) => c.key === key);
    say("Loading " + corpus.display + ", seed " + corpus.seed + "…");
    return loadData(corpus.data).then((records) => {
      state.corpus = key;
      state.records = records;
      state.page = 0;
      $("corpus").value = key;
      refreshList();
      refreshUnits(key);
      say(corpus.display + ", seed " + corpus.seed + ": " + records.length + " generations.");
      document.body.dataset.ready = key;
      window.reviewLoadedMs = window.reviewLoadedMs || performance.now();
      return records;
    }).catch((error) => say(error.message, true));
  }

  // --- the document view ------------------------------------------------------------------------
  function highlightTitle(kind, value, sources, leakClass) {
    const what = { fictional: "fictional value", real: "real value", near: "near variant of real" }[kind];
    return what + " “" + value + "”" + (sources.length ? " from " + sources.join(", ") : "") +
      (leakClass ? "; " + LEAK_CLASSES[leakClass] : "");
  }

  function highlightClass(kind, leakClass) { return "hl-" + kind + (leakClass ? " leak-" + leakClass : ""); }

  function refButton(label, onClick) {
    const button = element("button", label, "ref");
    button.type = "button";
    button.addEventListener("click", onClick);
    return button;
  }

  function showValues(record) {
    const list = $("doc-values");
    list.textContent = "";
    const seen = new Set();
    record.highlights.forEach(([, , kind, value, sources, leakClass]) => {
      if (seen.has(kind + value)) return;
      seen.add(kind + value);
      const item = element("li", null, leakClass ? "leak-class-" + leakClass : "");
      item.appendChild(element("mark", value, highlightClass(kind, leakClass)));
      const described = kind + (leakClass ? ", " + LEAK_CLASSES[leakClass] : "");
      item.appendChild(document.createTextNode(" " + described + (sources.length ? ", from " : " ")));
      sources.forEach((ref) => { item.appendChild(refButton(ref, () => showReal(ref))); item.append(" "); });
      item.appendChild(refButton("look up", () => lookUp(value)));
      list.appendChild(item);
    });
    if (!seen.size) list.appendChild(element("li", "none"));
  }

  function comparison(record, compared, title, real) {
    const box = element("div", null, "comparison");
    box.appendChild(element("h4", title));
    const pair = element("div", null, "pair");
    const ours = element("div", null, "text");
    const theirs = element("div", null, "text");
    renderSpans(ours, record.text, compared.shared.map(([s, e]) => [s, e, "hl-shared", "shared with " + compared.ref]));
    const segment = real[compared.ref] || { text: "(segment not in the data)", spans: [] };
    renderSpans(theirs, segment.text, compared.shared_real.map(([s, e]) => [s, e, "hl-shared", "shared with the generation"]));
    pair.appendChild(ours);
    pair.appendChild(theirs);
    box.appendChild(pair);
    return box;
  }

  function showComparisons(record, real) {
    const contexts = $("doc-contexts");
    contexts.textContent = "";
    if (record.contexts.length) contexts.appendChild(element("h3", "Context documents of the prompt"));
    record.contexts.forEach((c, n) => contexts.appendChild(comparison(record, c, "context " + (n + 1) + ": " + c.ref, real)));
    const nearest = $("doc-nearest");
    nearest.textContent = "";
    nearest.appendChild(element("h3", "Nearest real training segments"));
    if (!record.nearest.length) nearest.appendChild(element("p", "none computed"));
    record.nearest.forEach((n) => nearest.appendChild(comparison(record, n,
      "rank " + n.rank + ": " + n.ref + " · cosine " + n.cosine.toFixed(3) + " · longest shared run " + n.longest + " words", real)));
  }

  function showGeneration(corpusKey, index) {
    const corpus = manifest.corpora.find((c) => c.key === corpusKey);
    return Promise.all([loadData(corpus.data), loadData("real")]).then(([records, real]) => {
      const record = records[index];
      state.selected = corpusKey === state.corpus ? index : null;
      $("document").hidden = false;
      $("document").dataset.corpus = corpusKey;
      $("document").dataset.index = index;
      $("doc-title").textContent = corpus.display + ", seed " + corpus.seed + ", generation " + index +
        " (paragraph range " + record.range + ", " + record.words + " words)";
      const flags = $("doc-flags");
      flags.textContent = "";
      flags.appendChild(badges(record));
      renderSpans($("doc-text"), record.text, record.highlights.map(([s, e, kind, value, sources, leakClass]) =>
        [s, e, highlightClass(kind, leakClass), highlightTitle(kind, value, sources, leakClass), value]));
      showValues(record);
      $("doc-code").textContent = record.code;
      showComparisons(record, real);
      const stored = comments()[commentKey(corpusKey, index)] || {};
      $("verdict").value = stored.verdict || "";
      $("comment").value = stored.comment || "";
      if (state.corpus === corpusKey) refreshList();
    }).catch((error) => say(error.message, true));
  }

  function showReal(ref) {
    return loadData("real").then((real) => {
      const segment = real[ref];
      $("real-view").hidden = false;
      $("real-title").textContent = "Real segment " + ref + (segment ? " (" + segment.split + " split)" : "");
      renderSpans($("real-text"), segment ? segment.text : "(not in the data)", segment ? segment.spans.map(
        ([s, e, type, value]) => [s, e, "hl-real", type + ": " + value, value]) : []);
      $("real-view").scrollIntoView();
    }).catch((error) => say(error.message, true));
  }

  function saveComment() {
    const view = $("document");
    if (view.hidden) return;
    const all = comments();
    const key = commentKey(view.dataset.corpus, view.dataset.index);
    const verdict = $("verdict").value;
    const text = $("comment").value.trim();
    if (!verdict && !text) delete all[key];
    else all[key] = { verdict: verdict || "other", comment: text, updated: new Date().toISOString() };
    saveComments(all);
    if (!verdict && text) $("verdict").value = "other";
    say("Comment saved for " + key + ".");
    refreshList();
  }

  // --- the person view: the real units that generations single out -------------------------------
  const UNIT_KINDS = {
    direct: "direct identifier of the unit",
    quasi: "quasi identifier of the unit",
    joins: "joins the generations: one unit's text alone holds it",
  };

  function unitSpans(spans) {
    return spans.map(([start, end, kind, value]) =>
      [start, end, "hl-unit unit-" + kind, value + ": " + UNIT_KINDS[kind], value]);
  }

  function linkLabel(link) {
    const numbers = link.generations.map((generation) => "#" + generation.i);
    if (numbers.length === 1) return "generation " + numbers[0] + " links it alone";
    return "generations " + numbers.join(", ") + " link it together (joined through " +
      link.joins.map((value) => "“" + value + "”").join(", ") + ")";
  }

  function refreshUnits(corpusKey) {
    const corpus = manifest.corpora.find((c) => c.key === corpusKey);
    return loadData("units").then((units) => {
      const entries = units[corpusKey] || [];
      $("units-open").textContent = (entries.length ? "Those of " : "No unit at risk from ") + corpus.display +
        ", seed " + corpus.seed + (entries.length ? " (click one to see it):" : ".");
      const list = $("units-list");
      list.textContent = "";
      entries.forEach((entry, n) => {
        const item = element("li", null, "unit-entry");
        item.appendChild(refButton("unit " + entry.unit, () => showUnit(corpusKey, n)));
        item.append(": " + entry.values.map((value) => value.value).join(", ") + " · " +
          entry.links.map(linkLabel).join("; "));
        list.appendChild(item);
      });
    }).catch((error) => say(error.message, true));
  }

  function unitValue(value) {
    const item = element("li");
    item.appendChild(element("mark", value.value, "hl-unit unit-" + value.identifier));
    item.append(" " + [value.type, value.identifier].filter(Boolean).join(", ") + "; " +
      (value.units === 1 ? "no other unit's text holds it" : "the texts of " + value.units + " units hold it"));
    return item;
  }

  function showUnit(corpusKey, n) {
    const corpus = manifest.corpora.find((c) => c.key === corpusKey);
    return Promise.all([loadData(corpus.data), loadData("real"), loadData("units")]).then(([records, real, units]) => {
      const entry = units[corpusKey][n];
      $("unit-view").hidden = false;
      $("unit-view").dataset.unit = entry.unit;
      $("unit-title").textContent = "Unit " + entry.unit + ", singled out by " + corpus.display + ", seed " + corpus.seed;
      $("unit-values").textContent = "";
      entry.values.forEach((value) => $("unit-values").appendChild(unitValue(value)));
      const links = $("unit-links");
      links.textContent = "";
      entry.links.forEach((link) => {
        links.appendChild(element("h3", linkLabel(link)));
        link.generations.forEach((generation) => {
          links.appendChild(refButton("open generation #" + generation.i, () => showGeneration(corpusKey, generation.i)));
          const text = element("div", null, "text unit-generation");
          renderSpans(text, records[generation.i].text, unitSpans(generation.spans));
          links.appendChild(text);
        });
      });
      const segments = $("unit-real");
      segments.textContent = "";
      segments.appendChild(element("h3", "Its real segments that hold these values (" + entry.real.length +
        " of the unit's " + entry.segments + ")"));
      entry.real.forEach(({ ref, spans }) => {
        const segment = real[ref];
        segments.appendChild(element("h4", ref + (segment ? " (" + segment.split + " split)" : "")));
        const text = element("div", null, "text unit-segment");
        renderSpans(text, segment ? segment.text : "(not in the data)", segment ? unitSpans(spans) : []);
        segments.appendChild(text);
      });
      $("unit-view").scrollIntoView();
    }).catch((error) => say(error.message, true));
  }

  // --- entity lookup ----------------------------------------------------------------------------
  function fold(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/ı/g, "i").toLowerCase()
      .split(/\s+/).filter(Boolean).join(" ");
  }

  function synthLabel(ref) {
    const [key, index] = ref.split(":");
    const corpus = manifest.corpora.find((c) => c.key === key);
    return (corpus ? corpus.display + " seed " + corpus.seed : key) + " #" + index;
  }

  function lookupEntry(entry) {
    const item = element("li", null, "lookup-entry");
    item.appendChild(element("strong", entry.value));
    item.append(" (" + entry.kinds.join(", ") + (entry.types.length ? "; " + entry.types.join(", ") : "") + ")");
    const real = element("div", "real: ", "lookup-real");
    Object.entries(entry.real).forEach(([ref, how]) => {
      real.appendChild(refButton(ref + (how === "near" ? " (near)" : ""), () => showReal(ref)));
      real.append(" ");
    });
    const synthetic = element("div", "synthetic: ", "lookup-synthetic");
    Object.entries(entry.synthetic).forEach(([ref, how]) => {
      const [key, index] = ref.split(":");
      synthetic.appendChild(refButton(synthLabel(ref) + (how === "near" ? " (near)" : ""), () => showGeneration(key, Number(index))));
      synthetic.append(" ");
    });
    item.appendChild(real);
    item.appendChild(synthetic);
    return item;
  }

  function lookUp(value) {
    $("lookup-input").value = value;
    return loadData("entities").then((index) => {
      const query = fold(value);
      const keys = Object.keys(index).filter((key) => key.includes(query))
        .sort((a, b) => (a !== query) - (b !== query) || a.length - b.length).slice(0, 20);
      const results = $("lookup-results");
      results.textContent = "";
      if (!query || !keys.length) { results.appendChild(element("p", "No document holds “" + value + "”.")); return; }
      const list = element("ul");
      keys.forEach((key) => list.appendChild(lookupEntry(index[key])));
      results.appendChild(list);
      $("lookup").scrollIntoView();
    }).catch((error) => say(error.message, true));
  }

  // --- export and import ------------------------------------------------------------------------
  function exportComments() {
    const entries = Object.entries(comments()).map(([key, c]) => {
      const [method, seed, generation] = key.split("/");
      return { method: method, seed: Number(seed), generation: Number(generation), verdict: c.verdict,
        comment: c.comment || "", updated: c.updated };
    });
    const file = { format: manifest.format, version: 1, dataset: manifest.dataset, setting: manifest.setting,
      idset: manifest.idset, fingerprint: manifest.fingerprint, exported: new Date().toISOString(), comments: entries };
    const name = "review-" + manifest.dataset + "-" + manifest.setting + "-" + manifest.idset + ".json";
    const link = element("a");
    link.href = URL.createObjectURL(new Blob([JSON.stringify(file, null, 2)], { type: "application/json" }));
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    say("Exported " + entries.length + " comments to " + name + ".");
  }

  // The reason a parsed file cannot be imported, or "" when it can.
  function importProblem(file) {
    if (!file || file.format !== manifest.format || !Array.isArray(file.comments)) return "not a review comments file";
    const theirs = [file.dataset, file.setting, file.idset].join("/");
    const ours = [manifest.dataset, manifest.setting, manifest.idset].join("/");
    if (theirs !== ours || file.fingerprint !== manifest.fingerprint) {
      return "written for " + theirs + " (corpora " + file.fingerprint + "), not for this page's " + ours +
        " (corpora " + manifest.fingerprint + ")";
    }
    for (const [n, c] of file.comments.entries()) {
      const corpus = manifest.corpora.find((k) => k.key === c.method + "/" + c.seed);
      if (!corpus || !Number.isInteger(c.generation) || c.generation < 0 || c.generation >= corpus.generations ||
          !manifest.verdicts.includes(c.verdict) || typeof (c.comment ?? "") !== "string") {
        return "comment " + (n + 1) + ": not a generation and verdict of this page";
      }
    }
    return "";
  }

  function importComments(name, text) {
    let file;
    try { file = JSON.parse(text); } catch (error) { say(name + ": malformed JSON", true); return; }
    const problem = importProblem(file);
    if (problem) { say(name + ": " + problem, true); return; }
    const all = comments();
    file.comments.forEach((c) => {
      const key = commentKey(c.method + "/" + c.seed, c.generation);
      if (!all[key] || (all[key].updated || "") <= (c.updated || "")) {
        all[key] = { verdict: c.verdict, comment: c.comment || "", updated: c.updated || "" };
      }
    });
    saveComments(all);
    say("Imported " + file.comments.length + " comments from " + name + ".");
    refreshList();
    if (!$("document").hidden) showGeneration($("document").dataset.corpus, Number($("document").dataset.index));
  }

  // --- wiring -----------------------------------------------------------------------------------
  function refilter() { state.page = 0; refreshList(); }
  $("corpus").addEventListener("change", (event) => openCorpus(event.target.value));
  ["sort", "verdict-filter", "only-leaking"].forEach((id) => $(id).addEventListener("change", refilter));
  $("search").addEventListener("input", refilter);
  document.querySelectorAll("input[name=flag]").forEach((box) => box.addEventListener("change", refilter));
  $("prev").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); refreshList(); });
  $("next").addEventListener("click", () => { state.page += 1; refreshList(); });
  $("save-comment").addEventListener("click", saveComment);
  $("verdict").addEventListener("change", saveComment);
  $("lookup-form").addEventListener("submit", (event) => { event.preventDefault(); lookUp($("lookup-input").value); });
  $("export").addEventListener("click", exportComments);
  // a method's "summary" link opens its release summary (a closed <details> does not open by itself)
  document.querySelectorAll("a.summary-link").forEach((link) => link.addEventListener("click", () => {
    document.getElementById(link.getAttribute("href").slice(1)).open = true;
  }));
  $("import").addEventListener("change", (event) => {
    const chosen = event.target.files[0];
    if (!chosen) return;
    chosen.text().then((text) => importComments(chosen.name, text));
    event.target.value = "";
  });
  if (manifest.corpora.length) openCorpus(manifest.corpora[0].key);
  else say("No corpora on this page.", true);
})();
