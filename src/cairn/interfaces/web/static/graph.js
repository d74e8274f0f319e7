// cairn web UI: the graph page. Cytoscape.js (vendored, MIT: cytoscape-license.txt)
// draws the neighbourhood served as JSON by /ui/graph.json; labels are drawn on a
// canvas (never parsed as HTML); clicking a node opens its note.
"use strict";
(function () {
  var box = document.getElementById("cy");
  if (!box || typeof cytoscape !== "function") return;
  var PALETTE = ["#2f6f8f", "#b5452b", "#4c8a3b", "#8a5cb8", "#c08a1e", "#2a9d8f",
                 "#d1495b", "#6d6875", "#386641", "#e76f51"];
  function colour(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }
  var info = document.getElementById("graph-info");
  var hops = document.getElementById("hops");
  if (hops) hops.addEventListener("change", function () { hops.form.submit(); });
  var t0 = performance.now();
  fetch(box.getAttribute("data-src"), { credentials: "same-origin" })
    .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then(function (data) {
      var els = data.elements;
      var relations = {};
      els.edges.forEach(function (e) {
        relations[e.data.relation] = true;
        e.data.colour = colour(e.data.relation);
        e.data.style = e.data.origin === "declared" ? "solid"
          : e.data.origin === "rule" ? "dashed" : "dotted";
      });
      var center = box.getAttribute("data-center");
      var cy = cytoscape({
        container: box,
        elements: els.nodes.concat(els.edges),
        style: [
          { selector: "node", style: { "label": "data(label)", "font-size": 10,
            "background-color": "#9fb3c1", "width": 14, "height": 14,
            "text-valign": "bottom", "text-margin-y": 3, "color": "#1d232a" } },
          // sparsely linked nodes: fainter, smaller labels, so the hubs read first
          { selector: "node[degree < 2]", style: { "text-opacity": 0.45, "font-size": 8 } },
          { selector: "node.document", style: { "background-color": "#2f6f8f",
            "width": 20, "height": 20, "shape": "round-rectangle" } },
          { selector: "node[document_id = '" + center.replace(/'/g, "") + "']",
            style: { "border-width": 3, "border-color": "#b5452b" } },
          { selector: "edge", style: { "width": 1.5, "line-color": "data(colour)",
            "target-arrow-color": "data(colour)", "target-arrow-shape": "triangle",
            "curve-style": "bezier", "line-style": "data(style)", "arrow-scale": 0.7 } }
        ],
        // force-directed for a neighbourhood; concentric (by degree, linear time) once
        // it is large: cose over 500 nodes takes seconds
        layout: els.nodes.length > 150
          ? { name: "concentric", animate: false, minNodeSpacing: 4,
              concentric: function (n) { return n.degree(); },
              levelWidth: function () { return 2; } }
          : { name: "cose", animate: false, numIter: 600, randomize: false }
      });
      var names = Object.keys(relations).sort();
      var holder = document.getElementById("relations");
      names.forEach(function (name) {
        var label = document.createElement("label");
        var input = document.createElement("input");
        input.type = "checkbox";
        input.checked = true;
        input.value = name;
        input.addEventListener("change", function () {
          cy.edges().filter(function (e) { return e.data("relation") === name; })
            .style("display", input.checked ? "element" : "none");
        });
        var swatch = document.createElement("span");
        swatch.className = "swatch";
        swatch.textContent = "■";
        label.appendChild(input);
        label.appendChild(swatch);
        label.appendChild(document.createTextNode(" " + name));
        holder.appendChild(label);
        swatch.style.color = colour(name);  // CSSOM, allowed by the CSP
      });
      cy.on("tap", "node", function (evt) {
        var d = evt.target.data();
        var href = "/note/" + encodeURIComponent(d.document_id || d.id);
        if (d.type === "unit") href += "#u-" + encodeURIComponent(d.id);
        window.location.href = href;
      });
      var ms = Math.round(performance.now() - t0);
      info.textContent = cy.nodes().length + " nodes, " + cy.edges().length + " edges in " +
        ms + " ms" + (data.hidden ? "; " + data.hidden + " more not shown" : "");
      box.dataset.ms = String(ms);
      box.dataset.ready = String(cy.nodes().length);
      window.__cy = cy;
    })
    .catch(function (err) {
      var p = document.createElement("p");
      p.className = "error";
      p.textContent = "The graph could not be loaded (" + err + ")";
      box.replaceChildren(p);
    });
})();
