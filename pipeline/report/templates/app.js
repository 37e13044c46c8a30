// Search on the index page; filters and the inline / side-by-side switch on pair pages.
// Plain DOM, no library, nothing fetched: everything is in files beside this one.
(function () {
  "use strict";

  function text(el, value) { el.textContent = value; return el; }

  // At most `n` characters, cut at the end of a word.
  function snippet(s, n) {
    if (s.length <= n) { return s; }
    var cut = s.slice(0, n + 1).replace(/\s+\S*$/, "");
    return (cut || s.slice(0, n)) + " …";
  }

  // --- search ---------------------------------------------------------------------------
  var q = document.getElementById("q");
  if (q && window.CR_INDEX) {
    var results = document.getElementById("results");
    var status = document.getElementById("search-status");
    var NUMBER = /^\d{1,3}(\.\d+[a-z]?)?(\.Ruling\.\d+)?\.?$/i;
    var run = function () {
      var query = q.value.trim().toLowerCase().replace(/\.$/, "");
      results.innerHTML = "";
      if (!query) { text(status, ""); return; }
      var found = [];
      if (NUMBER.test(query)) {
        window.CR_INDEX.forEach(function (e) {
          if (e[1].toLowerCase().split("\t").indexOf(query) >= 0) { found.push(e); }
        });
      } else {
        var words = query.split(/\s+/);
        window.CR_INDEX.forEach(function (e) {
          var hay = (e[1] + " " + e[5]).toLowerCase();
          if (words.every(function (w) { return hay.indexOf(w) >= 0; })) { found.push(e); }
        });
      }
      text(status, found.length + (found.length === 1 ? " rule" : " rules") +
        (found.length > 50 ? " (first 50 shown)" : ""));
      found.slice(0, 50).forEach(function (e) {
        var li = document.createElement("li");
        var a = text(document.createElement("a"), e[1].split("\t").join(" → "));
        a.href = e[0];
        li.appendChild(a);
        li.appendChild(text(document.createElement("span"), " " + e[2] + ", " + e[3] + " – " + e[4] + ": "));
        li.appendChild(text(document.createElement("span"), snippet(e[5], 160))).className = "muted";
        results.appendChild(li);
      });
    };
    q.addEventListener("input", run);
    if (q.value) { run(); }
  }

  // --- ?as-of=DATE|SET: which edition was in force then (editions.js: CR_EDITIONS, CR_SETS, CR_LABELS) -----
  function label(edition) {
    var names = window.CR_LABELS || {};
    return names[edition] ? edition + " (" + names[edition] + ")" : edition;
  }

  // {asked, date, via, inForce} or {error}: a real calendar date, or a set code the registry knows.
  function pickEdition(asked) {
    var date = "", via = "";
    if (/^\d{4}-\d{2}-\d{2}$/.test(asked) && !isNaN(Date.parse(asked + "T00:00:00Z")) &&
        new Date(asked + "T00:00:00Z").toISOString().slice(0, 10) === asked) {
      date = asked;
    } else {
      var set = (window.CR_SETS || {})[asked.toUpperCase()];
      if (!set) {
        return {error: "?as-of=" + asked + " is neither a date (YYYY-MM-DD) nor a set code these reports know " +
          "(M10, DSK, ...): no edition was picked, and nothing is shown in its place."};
      }
      date = set[0];
      via = asked.toUpperCase() + " (" + set[1] + ", effective " + set[0] + ")";
    }
    if (!window.CR_EDITIONS.length) { return {error: "These reports hold no complete edition to pick from."}; }
    var inForce = "";
    window.CR_EDITIONS.forEach(function (e) { if (e <= date) { inForce = e; } });
    if (!inForce) {
      return {error: "No edition here was in force on " + (via || date) + ": the first is " +
        label(window.CR_EDITIONS[0]) + "."};
    }
    return {asked: asked, date: date, via: via, inForce: inForce};
  }

  function asOfParam() {
    var m = /[?&]as-of=([^&#]*)/.exec(location.search);
    if (!m) { return null; }
    try { return decodeURIComponent(m[1].replace(/\+/g, " ")).trim(); } catch (e) { return m[1]; }
  }

  // --- the latest edition, which pages do not name (a rule that goes on keeps its page): editions.js names it --
  var editionsJs = document.querySelector("script[src$='editions.js']");
  var root = editionsJs ? editionsJs.getAttribute("src").slice(0, -"editions.js".length) : "";
  var latest = window.CR_EDITIONS && window.CR_EDITIONS.length ? window.CR_EDITIONS[window.CR_EDITIONS.length - 1] : "";
  function editionLink(edition, anchor) {
    var a = text(document.createElement("a"), edition);
    a.href = root + "editions/" + edition + ".html" + (anchor ? "#" + anchor : "");
    return a;
  }
  if (latest) {
    Array.prototype.forEach.call(document.querySelectorAll(".latest"), function (el) {
      el.textContent = "";
      el.appendChild(el.dataset.anchor ? editionLink(latest, el.dataset.anchor) : text(document.createElement("span"), latest));
      if ((window.CR_LABELS || {})[latest]) { el.appendChild(text(document.createElement("span"), " (" + window.CR_LABELS[latest] + ")")); }
    });
    // a lineage that goes on: the editions after the last version its page shows, each linked, or nothing
    Array.prototype.forEach.call(document.querySelectorAll("[data-since]"), function (el) {
      var since = el.dataset.since, later = window.CR_EDITIONS.filter(function (e) { return e > since; });
      var count = document.querySelector(".count[data-before]");
      if (count) { var n = +count.dataset.before + later.length; text(count, n + (n === 1 ? " edition" : " editions")); }
      if (!later.length) { el.hidden = true; return; }
      text(el.querySelector(".date"), later[0] + (later.length > 1 ? " … " + later[later.length - 1] : ""));
      listEditions(el, later);
    });
  }
  // a run of unchanged versions in consecutive editions, written as its ends: each edition of it, linked
  function listEditions(el, editions) {
    var list = text(el.querySelector(".later"), "in ");
    editions.forEach(function (e, i) {
      list.appendChild(editionLink(e, el.dataset.anchor));
      if (i + 1 < editions.length) { list.appendChild(document.createTextNode(", ")); }
    });
  }
  if (window.CR_EDITIONS) {
    Array.prototype.forEach.call(document.querySelectorAll("[data-from]"), function (el) {
      listEditions(el, window.CR_EDITIONS.filter(function (e) { return el.dataset.from <= e && e <= el.dataset.to; }));
    });
  }

  // --- rules/<number>.html: forwards to the rule now, or as of a date or set ---------------------------------
  var target = document.getElementById("rule-target");
  if (target && window.CR_EDITIONS) {
    var asked = asOfParam(), why = document.getElementById("as-of-status");
    if (asked === null) {
      if (target.dataset.current && latest && location.hash !== "#periods") {
        location.replace(root + "editions/" + latest + ".html#" + target.dataset.number);
      }
    } else {
      var picked = pickEdition(asked), number = target.dataset.number;
      // a period or span that goes on has no last edition ("")
      var within = function (s) { return s[0] <= picked.inForce && (s[1] === "" || picked.inForce <= s[1]); };
      var span = picked.error ? null : JSON.parse(target.dataset.spans).filter(within)[0];
      var held = picked.error ? null : JSON.parse(target.dataset.held).filter(within)[0];
      var go = span ? span[2] : held ? number : "";
      if (picked.error) {
        text(why, picked.error);
      } else if (!go) {
        text(why, "As of " + (picked.via || picked.date) + ", the edition in force was " + label(picked.inForce) +
          ": rule " + number + " was not in it" + (target.dataset.current ? ", nor was the rule numbered so now" : "") +
          ". What the number was in each period is below.");
      } else {
        location.replace(target.dataset.editions + "editions/" + picked.inForce + ".html?as-of=" +
          encodeURIComponent(asked) + "&rule=" + encodeURIComponent(number) + "#" + go);
      }
    }
  }

  // --- edition pages: Yawgatog's anchors (#R7023b: "R" and the number without dots), and what ?as-of= picked --
  var reader = document.body.classList.contains("reader");
  function note(message) {
    var box = document.getElementById("as-of-note") || document.createElement("p");
    box.id = "as-of-note";
    box.setAttribute("role", "status");
    text(box, message);
    var close = text(document.createElement("button"), "×");
    close.setAttribute("aria-label", "close");
    close.addEventListener("click", function () { box.remove(); });
    box.appendChild(close);
    document.body.appendChild(box);
  }
  function yawgatog() {
    var m = /^#R(\d+)([a-z]?)$/i.exec(location.hash);
    if (!m || document.getElementById(location.hash.slice(1))) { return; }
    var id = (m[1].length > 3 ? m[1].slice(0, 3) + "." + m[1].slice(3) : m[1]) + m[2].toLowerCase();
    if (document.getElementById(id)) {
      location.replace("#" + id);
    } else {
      note(location.hash.slice(1) + " is rule " + id + ", which this edition does not have.");
    }
  }
  if (reader) {
    yawgatog();
    window.addEventListener("hashchange", yawgatog);
    var askedHere = asOfParam(), rule = /[?&]rule=([0-9][0-9A-Za-z.\-]*)(?:&|$)/.exec(location.search);
    if (askedHere !== null && window.CR_EDITIONS) {
      var here = pickEdition(askedHere), shownAs = decodeURIComponent(location.hash.slice(1));
      if (here.error) {
        note(here.error);
      } else {
        note((rule ? "Rule " + rule[1] + " as of " : "As of ") + (here.via || here.date) +
          ": the edition in force then was " + label(here.inForce) +
          (rule && shownAs && shownAs !== rule[1] ? ", where it was numbered " + shownAs : "") + ".");
      }
    }
  }

  // --- pair pages: filters and view, kept in the address (#show=modified,added&chapter=205&view=side) --
  var filters = document.getElementById("filters");
  if (filters) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("li.change"));
    var chapter = document.getElementById("chapter");
    var shown = document.getElementById("shown");
    var boxes = Array.prototype.slice.call(filters.querySelectorAll("input[name=class]"));
    var side = false;
    var state = function () {
      var on = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
      return "show=" + on.join(",") + (chapter.value ? "&chapter=" + encodeURIComponent(chapter.value) : "") +
        (side ? "&view=side" : "");
    };
    var remember = function () {
      try { history.replaceState(null, "", "#" + state()); } catch (e) { /* an old browser: the state is not kept */ }
    };
    var apply = function () {
      var on = {};
      boxes.forEach(function (box) { on[box.value] = box.checked; });
      var ch = chapter.value, n = 0;
      rows.forEach(function (row) {
        var visible = on[row.dataset.class] === true && (!ch || row.dataset.chapter === ch || row.dataset.part === ch);
        row.hidden = !visible;
        if (visible) { n += 1; }
      });
      text(shown, n + " of " + rows.length + " shown");
    };
    // a side-by-side redline the page leaves out (a part with no .side-view): the inline one without its
    // insertions, and without its deletions
    var derive = function () {
      Array.prototype.forEach.call(document.querySelectorAll(".part"), function (part) {
        var inline = part.querySelector(".inline-view");
        if (!inline || part.querySelector(".side-view")) { return; }
        var box = document.createElement("div");
        box.className = "diff side-view";
        [["old", "ins"], ["new", "del"]].forEach(function (pair) {
          var half = inline.cloneNode(true);
          half.className = pair[0];
          Array.prototype.forEach.call(half.querySelectorAll(pair[1]), function (x) { x.remove(); });
          box.appendChild(half);
        });
        part.appendChild(box);
      });
    };
    var view = function (toSide) {
      side = toSide;
      if (side) { derive(); }
      document.body.classList.toggle("side", side);
      document.body.classList.toggle("inline", !side);
      document.getElementById("view-side").setAttribute("aria-pressed", String(side));
      document.getElementById("view-inline").setAttribute("aria-pressed", String(!side));
    };
    var restore = function () {
      var hash = decodeURIComponent(location.hash.slice(1));
      if (hash.indexOf("=") >= 0) {
        var params = {};
        hash.split("&").forEach(function (kv) { var i = kv.indexOf("="); params[kv.slice(0, i)] = kv.slice(i + 1); });
        if ("show" in params) {
          var wanted = params.show.split(",");
          boxes.forEach(function (box) { box.checked = wanted.indexOf(box.value) >= 0; });
        }
        chapter.value = params.chapter || "";
        view(params.view === "side");
      } else if (hash) {  // a link to one change: make sure it is shown
        var target = document.getElementById(hash);
        if (target && target.dataset.class) {
          boxes.forEach(function (box) { if (box.value === target.dataset.class) { box.checked = true; } });
          if ([target.dataset.chapter, target.dataset.part, ""].indexOf(chapter.value) < 0) { chapter.value = ""; }
        }
      }
      apply();
      if (hash && hash.indexOf("=") < 0 && document.getElementById(hash)) { document.getElementById(hash).scrollIntoView(); }
    };
    filters.addEventListener("change", function () { apply(); remember(); });
    document.getElementById("view-inline").addEventListener("click", function () { view(false); remember(); });
    document.getElementById("view-side").addEventListener("click", function () { view(true); remember(); });
    window.addEventListener("hashchange", restore);  // a link to another change on this page
    restore();
  }

  // --- source pages: a line's number (drawn by style.css) links to it; ?lines=515-521#L515 highlights a range --
  var source = document.querySelector("pre.source");
  if (source) {
    source.addEventListener("click", function (event) {
      var line = event.target.closest("pre.source > *");
      if (line && event.target === line && event.clientX - line.getBoundingClientRect().left < 4.5 * parseFloat(getComputedStyle(line).fontSize)) {
        event.preventDefault();  // a line shown on the edition page is a link there: its number stays here
        location.hash = line.id;
      }
    });
  }
  var lines = /[?&]lines=(\d+)-(\d+)/.exec(location.search);
  if (lines && source) {
    for (var i = +lines[1]; i <= +lines[2] && i - lines[1] < 5000; i += 1) {
      var line = document.getElementById("L" + i);
      if (line) { line.classList.add("hl"); }
    }
  }

  // --- lineage pages: cosmetic differences greyed unless asked for ------------------------------
  var cosmetic = document.getElementById("show-cosmetic");
  if (cosmetic) {
    cosmetic.addEventListener("change", function () { document.body.classList.toggle("show-cosmetic", cosmetic.checked); });
  }
})();
