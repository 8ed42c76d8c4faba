// report.html's charts: uPlot draws each figure.chart from its spec in
// #chart-data. Every number was computed by cmpbench from the archive; this
// script only draws them.
(function () {
  "use strict";
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var height = 320;

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
    if (a.format === "percentile") {
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

  function series(s) {
    var c = color(s.color);
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
      (spec.hlines || []).forEach(function (l) {
        var y = u.valToPos(l.y, "y", true);
        ctx.strokeStyle = "#444";
        ctx.setLineDash([5 * px, 4 * px]);
        ctx.lineWidth = px;
        ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + w, y); ctx.stroke();
        ctx.fillStyle = "#444";
        ctx.textAlign = "right";
        ctx.fillText(l.label, left + w - 4 * px, y - 4 * px);
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

  function draw(spec, el) {
    var opts = {
      title: spec.title,
      width: Math.max(el.clientWidth, 320),
      height: height,
      scales: {
        x: spec.x.log ? { time: false, distr: 3, log: 10 } : { time: false },
        y: spec.y.log ? { distr: 3, log: 10 } : spec.y.zero ? { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } : {}
      },
      axes: [axis(spec.x, "x"), axis(spec.y, "y")],
      series: [{ label: spec.x.label }].concat(spec.series.map(series)),
      hooks: { drawClear: [bands(spec)], draw: [overlay(spec)] }
    };
    var data = [spec.xs].concat(spec.series.map(function (s) { return s.ys; }));
    return new uPlot(opts, data, el);
  }

  var specs = JSON.parse(document.getElementById("chart-data").textContent);
  var byID = {};
  specs.forEach(function (s) { byID[s.id] = s; });
  var plots = [];
  document.querySelectorAll("figure.chart").forEach(function (fig) {
    var spec = byID[fig.getAttribute("data-chart")], el = fig.querySelector(".plot");
    try {
      plots.push({ el: el, plot: draw(spec, el) });
    } catch (e) {
      el.textContent = "This chart could not be drawn: " + e;
      console.error("chart " + fig.getAttribute("data-chart") + ": " + e);
    }
  });

  function resize(width) {
    plots.forEach(function (p) { p.plot.setSize({ width: width || Math.max(p.el.clientWidth, 320), height: height }); });
  }
  var pending;
  window.addEventListener("resize", function () { clearTimeout(pending); pending = setTimeout(function () { resize(); }, 100); });
  window.addEventListener("beforeprint", function () { resize(680); });
  window.addEventListener("afterprint", function () { resize(); });
}());
