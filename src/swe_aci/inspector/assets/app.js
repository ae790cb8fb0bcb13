// swe-aci inspect: sorting and filtering the run table, keyboard navigation, observations loaded
// on demand. Text read from the server is only ever inserted with textContent.
(function () {
  "use strict";
  var body = document.body;

  function sortTable(table, column, type, ascending) {
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column], y = b.cells[column];
      var u = type === "number" ? parseFloat(x.dataset.value) : x.textContent.trim();
      var v = type === "number" ? parseFloat(y.dataset.value) : y.textContent.trim();
      var order = type === "number" ? u - v : u.localeCompare(v);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { tbody.appendChild(row); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, column) {
      th.classList.add("sort");
      th.addEventListener("click", function () {
        var ascending = th.dataset.order !== "asc";
        table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
        th.dataset.order = ascending ? "asc" : "desc";
        sortTable(table, column, th.dataset.type || "text", ascending);
      });
    });
  });

  var instances = document.getElementById("instances");
  if (instances) {
    var exit = document.getElementById("filter-exit");
    var outcome = document.getElementById("filter-outcome");
    var ident = document.getElementById("filter-id");
    var shown = document.getElementById("shown-count");
    var apply = function () {
      var count = 0;
      Array.prototype.forEach.call(instances.tBodies[0].rows, function (row) {
        var keep = (!exit.value || row.dataset.exit === exit.value) &&
          (!outcome.value || row.dataset.outcome === outcome.value) &&
          (!ident.value || row.dataset.id.indexOf(ident.value) >= 0);
        row.hidden = !keep;
        if (keep) { count += 1; }
      });
      shown.textContent = count + " shown";
    };
    [exit, outcome].forEach(function (el) { el.addEventListener("change", apply); });
    ident.addEventListener("input", apply);
  }

  function load(details) {
    var src = details.dataset.src;
    var full = details.querySelector("pre.full");
    if (!src || details.dataset.loaded || !full) { return; }
    details.dataset.loaded = "loading";
    full.textContent = "loading...";
    fetch(src, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.text();
    }).then(function (text) {
      full.textContent = text;
      details.dataset.loaded = "yes";
    }).catch(function (error) {
      full.textContent = "could not load the observation: " + error.message;
      delete details.dataset.loaded;
    });
  }
  document.querySelectorAll("details.observation").forEach(function (details) {
    details.addEventListener("toggle", function () { if (details.open) { load(details); } });
  });

  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  var current = -1;
  function select(index, scroll) {
    if (!steps.length) { return; }
    index = Math.max(0, Math.min(steps.length - 1, index));
    if (current >= 0) { steps[current].classList.remove("current"); }
    current = index;
    steps[current].classList.add("current");
    if (scroll) { steps[current].scrollIntoView({ block: "start" }); }
    history.replaceState(null, "", "#" + steps[current].id);
  }
  function fromHash() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    var index = steps.indexOf(target);
    if (index >= 0) {
      select(index, true);
      var details = steps[index].querySelector("details.observation");
      if (details) { details.open = true; }
    }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  document.addEventListener("keydown", function (event) {
    var tag = event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var key = event.key;
    if (key === "j") { select(current + 1, true); }
    else if (key === "k") { select(current - 1, true); }
    else if (key === "n" && body.dataset.next) { location.href = body.dataset.next; }
    else if (key === "p" && body.dataset.prev) { location.href = body.dataset.prev; }
    else if (key === "o" && current >= 0) {
      var details = steps[current].querySelector("details.observation");
      if (details) { details.open = !details.open; }
    } else if (key === "u") {
      var all = document.querySelectorAll("details.observation");
      var open = Array.prototype.some.call(all, function (d) { return !d.open; });
      all.forEach(function (d) { d.open = open; });
    } else if (key === "/") {
      var search = document.getElementById("search");
      if (search) { search.focus(); event.preventDefault(); }
    } else { return; }
  });
})();
