// cairn web UI: search as you type, keyboard navigation. No inline script anywhere:
// the Content-Security-Policy allows scripts from /static/ only.
"use strict";
(function () {
  var input = document.getElementById("q");
  var box = document.getElementById("hits");
  var selected = -1;

  function hits() { return box ? box.querySelectorAll("li.hit") : []; }

  function select(i) {
    var list = hits();
    if (!list.length) { selected = -1; return; }
    selected = Math.max(0, Math.min(i, list.length - 1));
    for (var k = 0; k < list.length; k++) list[k].classList.toggle("selected", k === selected);
    list[selected].scrollIntoView({ block: "nearest" });
  }

  function mode() {
    var m = document.querySelector("input[name=mode]:checked");
    return m ? m.value : "";
  }

  var timer = null, seq = 0, controller = null;
  function refresh() {
    var q = input.value, m = mode();
    var params = new URLSearchParams();
    if (q) params.set("q", q);
    if (m) params.set("mode", m);
    var ex = document.querySelector("input[name=expand]");
    if (ex && ex.checked) params.set("expand", "true");
    var qs = params.toString();
    history.replaceState(null, "", qs ? "/?" + qs : "/");
    document.title = (q || "Search") + " · cairn";
    var mine = ++seq;
    if (controller) controller.abort();
    controller = new AbortController();
    load(qs, mine, controller.signal, 2);
  }

  function load(qs, mine, signal, tries) {
    fetch("/ui/hits?" + qs, { signal: signal, credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok && r.status >= 500) throw new Error("HTTP " + r.status);
        return r.text();
      })
      .then(function (html) {
        if (mine !== seq) return;
        box.innerHTML = html;  // server-rendered, escaped and sanitised
        selected = -1;
      })
      .catch(function (err) {
        if (mine !== seq || (err && err.name === "AbortError")) return;  // a newer keystroke
        if (tries > 1) { load(qs, mine, signal, tries - 1); return; }
        var p = document.createElement("p");
        p.className = "error";
        p.textContent = "The search failed (" + err + "); is cairn serve still running?";
        box.replaceChildren(p);
      });
  }

  // The box is focused on load (no autofocus attribute: "/" would then type a slash);
  // until the user types, "/" is still the focus shortcut, not a character.
  var fresh = false;
  if (input && box && !input.value) { input.focus(); fresh = true; }

  if (input && box) {
    input.addEventListener("input", function () {
      fresh = false;
      clearTimeout(timer);
      timer = setTimeout(refresh, 120);
    });
    var radios = document.querySelectorAll("input[name=mode]");
    for (var r = 0; r < radios.length; r++) radios[r].addEventListener("change", refresh);
    var ex = document.querySelector("input[name=expand]");
    if (ex) ex.addEventListener("change", refresh);
    box.addEventListener("click", function (e) {
      var a = e.target && e.target.closest ? e.target.closest("a.facet-value") : null;
      if (!a || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      input.value = a.getAttribute("data-q");
      refresh();
    });
    input.form.addEventListener("submit", function (e) { e.preventDefault(); refresh(); });
  }

  document.addEventListener("keydown", function (e) {
    var typing = e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA");
    if (e.key === "/" && input && (!typing || (e.target === input && fresh))) {
      e.preventDefault();
      input.focus();
      input.select();
      fresh = true;
      return;
    }
    if (!box) return;
    if (e.key === "ArrowDown") { e.preventDefault(); select(selected + 1); }
    else if (e.key === "ArrowUp") { e.preventDefault(); select(selected - 1); }
    else if (e.key === "Enter" && selected >= 0) {
      var link = hits()[selected].querySelector("a.hit-title");
      if (link) { e.preventDefault(); window.location.href = link.getAttribute("href"); }
    } else if (e.key === "Escape" && typing) { input.blur(); }
  });

  // Live updates: the server says "changed" on /ui/events when the index changed (a
  // re-index, or the watcher of cairn serve --watch); the search page re-runs its query,
  // the other pages that show indexed data reload.
  if (window.EventSource && !document.body.classList.contains("graph-page")) {
    var badge = document.getElementById("live");
    var events = new EventSource("/ui/events");
    events.addEventListener("hello", function () { document.body.setAttribute("data-live", "on"); });
    events.addEventListener("changed", function (e) {
      var info = {};
      try { info = JSON.parse(e.data) || {}; } catch (err) { info = {}; }
      document.body.setAttribute("data-run", String(info.run || ""));
      if (badge) {
        badge.hidden = false;
        badge.textContent = "index updated " + new Date().toLocaleTimeString();
      }
      if (input && box) { if (input.value) refresh(); }
      else if (document.body.classList.contains("note-page") ||
               document.body.classList.contains("conversation-page") ||
               document.body.classList.contains("conversations-page") ||
               document.body.classList.contains("status-page")) {
        events.close();
        window.location.reload();
      }
    });
  }
})();
