// report.html's charts: uPlot draws each figure.chart from its spec in
// #chart-data. Every number was computed by cmpbench from the archive; this
// script only draws them.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var height = 320, panelHeight = 200;

  function color(i, alpha) {
    var c = palette[i % palette.length];
    if (alpha === undefined) return c;
    var n = parseInt(c.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  // percentile labels x = 1/(1-q): 1 is 0%, 10 is 90%, 1000 is 99.9%.
  function percentile(x) {
    if (x < 1.5) return "0%";
    return String(Number((100 * (1 - 1 / x)).toPrecision(8))) + "%";
  }

  function si(v) {
    var units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(v) >= units[i][0]) return String(Number((v / units[i][0]).toPrecision(4))) + units[i][1];
    }
    return String(Number(v.toPrecision(4)));
  }

  function decades(u, axis, min, max) {
    var out = [];
    for (var e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
      var v = Math.pow(10, e);
      if (v >= min * 0.999 && v <= max * 1.001) out.push(v);
    }
    return out;
  }

  function axis(a, scale) {
    var o = { label: a.label, scale: scale };
    if (a.names) {
      o.splits = function () { return a.names.map(function (n, i) { return i; }); };
      o.values = function (u, splits) { return splits.map(function (i) { return a.names[i]; }); };
    } else if (a.format === "percentile") {
      o.splits = decades;
      o.values = function (u, splits) { return splits.map(percentile); };
    } else if (a.format === "si") {
      o.values = function (u, splits) { return splits.map(si); };
      o.size = 60;
    } else if (scale === "y") {
      o.size = 60;
    }
    return o;
  }

  // barRoom is the width of each of a chart's bars and of their group: the
  // group at most 80% of a category's room, each bar at most 40 px.
  function barRoom(u, n) {
    var room = Math.abs(u.valToPos(1, "x", true) - u.valToPos(0, "x", true));
    var w = Math.min(40 * (window.devicePixelRatio || 1), room * 0.8 / Math.max(n, 1));
    return { bar: w, group: w * n };
  }

  // bars draws the k-th of n bar series as a bar at each category, its group
  // centered on the category.
  function bars(k, n) {
    return function (u, si, i0, i1) {
      var xs = u.data[0], ys = u.data[si], p = new Path2D(), w = barRoom(u, n).bar;
      var zero = u.valToPos(0, "y", true);
      for (var i = i0; i <= i1; i++) {
        if (ys[i] == null) continue;
        var x = u.valToPos(xs[i], "x", true) + (k - (n - 1) / 2) * w - w / 2, y = u.valToPos(ys[i], "y", true);
        p.rect(x, y, w, zero - y);
      }
      return { stroke: p, fill: p };
    };
  }

  function series(s, k, n) {
    var c = color(s.color);
    if (s.bars) return { label: s.label, stroke: c, fill: c, width: 0, paths: bars(k, n), points: { show: false } };
    var o = { label: s.label, stroke: c, width: s.line ? 1.5 : 0, spanGaps: true };
    if (s.dash) o.dash = [6, 4];
    if (!s.line) o.paths = function () { return null; };
    o.points = s.points ? { show: true, space: 0, size: s.line ? 5 : 3, fill: c, stroke: c } : { show: false };
    return o;
  }

  // bands shades stretches of x (stalls) behind the series.
  function bands(spec) {
    return function (u) {
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      (spec.bands || []).forEach(function (b) {
        var x0 = u.valToPos(b.from, "x", true), x1 = u.valToPos(b.to, "x", true);
        ctx.fillStyle = color(b.color, 0.18);
        ctx.fillRect(x0, top, Math.max(x1 - x0, 2), h);
      });
    };
  }

  // overlay draws the horizontal lines (a target, a threshold) and the marked
  // points (the knee, a step not sustained), each labelled.
  function overlay(spec) {
    return function (u) {
      var ctx = u.ctx, px = window.devicePixelRatio || 1, left = u.bbox.left, w = u.bbox.width;
      ctx.save();
      ctx.font = (11 * px) + "px sans-serif";
      var named = {}, group = barRoom(u, spec.series.filter(function (s) { return s.bars; }).length).group;
      (spec.hlines || []).forEach(function (l) {
        if (!l.fit && (l.y < u.scales.y.min || l.y > u.scales.y.max)) return; // beyond the data: not drawn
        var y = u.valToPos(l.y, "y", true), x0 = left, x1 = left + w;
        if (l.category) {
          var x = u.valToPos(l.category - 1, "x", true);
          x0 = x - group / 2; x1 = x + group / 2;
        }
        ctx.strokeStyle = "#444";
        ctx.setLineDash([5 * px, 4 * px]);
        ctx.lineWidth = l.category ? 1.5 * px : px;
        ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke();
        if (named[l.label]) return; // one label for the levels of one name
        named[l.label] = true;
        ctx.fillStyle = "#444";
        ctx.textAlign = "right";
        ctx.fillText(l.label, x1 - 4 * px, y - 4 * px);
        ctx.textAlign = "left";
      });
      ctx.setLineDash([]);
      (spec.marks || []).forEach(function (m) {
        var x = u.valToPos(m.x, "x", true), y = u.valToPos(m.y, "y", true);
        ctx.strokeStyle = color(m.color);
        ctx.lineWidth = 2 * px;
        ctx.beginPath(); ctx.arc(x, y, 6 * px, 0, 2 * Math.PI); ctx.stroke();
        ctx.fillStyle = color(m.color);
        ctx.fillText(m.label, x + 8 * px, y - 8 * px);
      });
      ctx.restore();
    };
  }

  // xScale is the x axis's scale: a category's room around each of its
  // categories, or reaching the stretch the axis spans at least.
  function xScale(a) {
    var s = a.log ? { time: false, distr: 3, log: 10 } : { time: false };
    if (a.names) s.range = function () { return [-0.5, a.names.length - 0.5]; };
    else if (a.max != null) s.range = function (u, min, max) { return [Math.min(min, a.min), Math.max(max, a.max)]; };
    return s;
  }

  // yScale is the y axis's scale, reaching the levels that must fit.
  function yScale(spec) {
    var a = spec.y, fits = (spec.hlines || []).filter(function (l) { return l.fit; }).map(function (l) { return l.y; });
    var s = a.log ? { distr: 3, log: 10 } : {};
    if (a.zero) s.range = function (u, min, max) { max = Math.max.apply(null, [max].concat(fits)); return [0, max > 0 ? max * 1.1 : 1]; };
    else if (fits.length) {
      s.range = function (u, min, max) {
        min = Math.min.apply(null, [min].concat(fits)); max = Math.max.apply(null, [max].concat(fits));
        return a.log ? uPlot.rangeLog(min, max, 10, true) : uPlot.rangeNum(min, max, 0.1, true);
      };
    }
    return s;
  }

  // xSeries is the x values' entry in the legend: a category's name.
  function xSeries(a) {
    var o = { label: a.label };
    if (a.names) o.value = function (u, v) { return v == null ? "" : a.names[v]; };
    return o;
  }

  function draw(spec, el, h) {
    var nbars = spec.series.filter(function (s) { return s.bars; }).length, k = 0;
    var opts = {
      title: spec.title,
      width: Math.max(el.clientWidth, 320),
      height: h,
      scales: { x: xScale(spec.x), y: yScale(spec) },
      axes: [axis(spec.x, "x"), axis(spec.y, "y")],
      series: [xSeries(spec.x)].concat(spec.series.map(function (s) { return series(s, s.bars ? k++ : 0, nbars); })),
      hooks: { drawClear: [bands(spec)], draw: [overlay(spec)] }
    };
    var data = [spec.xs].concat(spec.series.map(function (s) { return s.ys; }));
    return new uPlot(opts, data, el);
  }

  var specs = JSON.parse(document.getElementById("chart-data").textContent);
  var byID = {};
  specs.forEach(function (s) { byID[s.id] = s; });
  var plots = [];

  // drawPanels draws a chart of panels: its title, then each panel, with its
  // own title, y axis and series, on the chart's x axis.
  function drawPanels(spec, el) {
    var title = document.createElement("div");
    title.className = "u-title";
    title.textContent = spec.title;
    el.appendChild(title);
    spec.panels.forEach(function (p) {
      var div = document.createElement("div");
      el.appendChild(div);
      plots.push({ el: el, h: panelHeight, plot: draw({ title: p.title, x: spec.x, y: p.y, xs: p.xs, series: p.series }, div, panelHeight) });
    });
  }

  document.querySelectorAll("figure.chart").forEach(function (fig) {
    var spec = byID[fig.getAttribute("data-chart")], el = fig.querySelector(".plot");
    try {
      if (spec.panels) drawPanels(spec, el);
      else plots.push({ el: el, h: height, plot: draw(spec, el, height) });
    } catch (e) {
      el.textContent = "This chart could not be drawn: " + e;
      console.error("chart " + fig.getAttribute("data-chart") + ": " + e);
    }
  });

  function resize(width) {
    plots.forEach(function (p) { p.plot.setSize({ width: width || Math.max(p.el.clientWidth, 320), height: p.h }); });
  }
  var pending;
  window.addEventListener("resize", function () { clearTimeout(pending); pending = setTimeout(function () { resize(); }, 100); });
  window.addEventListener("beforeprint", function () { resize(680); });
  window.addEventListener("afterprint", function () { resize(); });
}());
