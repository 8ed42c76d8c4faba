  // The live page of a run (cmpbench run --live): its state arrives whole
  // with every change, as server-sent events from /events, and is drawn with
  // report.html's own charts (this code runs inside report.js's closure, in
  // place of report.html's loop over its figures).
  var live = { state: null, ended: false };
  window.cmpbenchLive = live;

  function count(n) { return Math.round(n).toLocaleString("en-US"); }

  function cell(tr, s, cls) {
    var td = document.createElement("td");
    td.textContent = s;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function showFacts(run) {
    var ul = document.getElementById("facts"), facts = [
      "Run " + run.id + ", suite " + run.suite + ": " + run.state,
      run.done + " of " + run.total + " phases done, " + run.elapsed + " so far" + (run.eta ? ", ETA " + run.eta : "")
    ];
    if (run.cpu) facts.push("Client CPU: " + run.cpu);
    ul.textContent = "";
    facts.forEach(function (f) {
      var li = document.createElement("li");
      li.textContent = f;
      ul.appendChild(li);
    });
    document.getElementById("status").textContent = run.state === "running" ? "Live: updated " + new Date().toLocaleTimeString() : "The run ended: " + run.state;
  }

  function showPhases(phases) {
    var tbody = document.querySelector("#phases tbody");
    tbody.textContent = "";
    phases.forEach(function (p, i) {
      var tr = document.createElement("tr");
      tr.className = p.state;
      tr.setAttribute("data-key", p.key);
      cell(tr, String(i + 1));
      cell(tr, p.system);
      cell(tr, p.phase + " (" + p.kind + ", " + p.shape + ")");
      cell(tr, p.state + (p.error ? ": " + p.error : ""));
      cell(tr, count(p.ok), "num ok");
      cell(tr, count(p.errors), "num errors");
      cell(tr, p.state === "pending" ? "" : count(p.rate), "num");
      cell(tr, (p.p99 || []).join(", "));
      cell(tr, (p.flags || []).concat(p.stalls ? [p.stalls + " probe stalls"] : []).join(", "), "flag");
      tbody.appendChild(tr);
    });
  }

  // forget destroys what report.js drew in el.
  function forget(el) {
    plots = plots.filter(function (p) {
      if (p.el !== el) return true;
      p.plot.destroy();
      return false;
    });
    el.textContent = "";
  }

  // redraw draws a figure's chart again from its spec, with report.js's draw.
  function redraw(fig, spec) {
    var el = fig.querySelector(".plot");
    forget(el);
    try {
      if (spec.panels) drawPanels(spec, el);
      else plots.push({ el: el, h: height, plot: draw(spec, el, height) });
      var xs = plots[plots.length - 1].plot.data[0];
      fig.setAttribute("data-last-x", xs.length ? String(xs[xs.length - 1]) : "");
    } catch (e) {
      el.textContent = "This chart could not be drawn: " + e;
      console.error("chart " + spec.id + ": " + e);
    }
  }

  function showCharts(of, specs, captions) {
    var section = document.getElementById("charts"), keep = {};
    document.getElementById("charts-of").textContent = of ? "Charts: " + of : "Charts";
    specs.forEach(function (spec, i) {
      keep[spec.id] = true;
      var fig = section.querySelector("figure.chart[data-chart='" + spec.id + "']");
      if (!fig) {
        fig = document.createElement("figure");
        fig.className = "chart";
        fig.setAttribute("data-chart", spec.id);
        fig.innerHTML = "<div class=\"plot\"></div><figcaption></figcaption>";
        section.appendChild(fig);
      }
      fig.querySelector("figcaption").textContent = captions[i] || "";
      redraw(fig, spec);
    });
    section.querySelectorAll("figure.chart").forEach(function (fig) {
      if (keep[fig.getAttribute("data-chart")]) return;
      forget(fig.querySelector(".plot"));
      fig.remove();
    });
  }

  function showNotes(notes) {
    var ul = document.getElementById("notes");
    ul.textContent = "";
    notes.forEach(function (n) {
      var li = document.createElement("li");
      li.textContent = n;
      ul.appendChild(li);
    });
  }

  var source = new EventSource("events");

  function show(st) {
    live.state = st;
    document.body.setAttribute("data-state", st.run.state);
    showFacts(st.run);
    showPhases(st.phases);
    showCharts(st.charts_of, st.charts, st.captions || []);
    showNotes(st.notes || []);
    if (st.run.state === "running") return;
    live.ended = true;
    source.close(); // the run is over: nothing more will come
    var end = document.getElementById("end");
    end.hidden = false;
    end.textContent = "The run ended: " + st.run.state + ". ";
    if (st.run.report) {
      end.appendChild(document.createTextNode("Its report: "));
      var code = document.createElement("code");
      code.textContent = st.run.report;
      end.appendChild(code);
    }
  }

  source.addEventListener("state", function (e) { show(JSON.parse(e.data)); });
  source.onerror = function () {
    if (!live.ended) document.getElementById("status").textContent = "The connection to the run was lost; trying again…";
  };

