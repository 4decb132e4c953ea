// gpurent's dashboard helpers, served as /static/gpurent.js next to plotly.min.js.
// No inline scripts (the pages' Content-Security-Policy has script-src 'self'): a chart's figure
// travels in the page as JSON, <script type="application/json" id="...">, and a <div> names it.
//
//   <div class="chart" data-chart="plan-figure"></div>
//   <script type="application/json" id="plan-figure">{"data": [...], "layout": {...}}</script>
//
// drawn on load by gpurent.drawAll(). A chart that follows a JSON endpoint names it too:
//
//   <div class="chart" data-live-url="/api/monitor/series?machine=m1" data-live-every-s="5"
//        data-live-transform="series"></div>
//
// and gpurent.live(url, div, everyS, transform) fetches it every `everyS` seconds and redraws.
// A transform turns the endpoint's JSON into a figure {data, layout}: "figure" (the default) takes
// the reply as it is, "series" takes {"series": [{"name", "x": [...], "y": [...]}], "title"?,
// "x_title"?, "y_title"?}; register more with gpurent.transforms.NAME = function (reply) {...}.
(function () {
  "use strict";

  var CONFIG = { responsive: true, displaylogo: false };

  function readJson(id) {
    var element = document.getElementById(id);
    if (!element) {
      throw new Error("gpurent: no element #" + id + " with the chart's JSON");
    }
    return JSON.parse(element.textContent);
  }

  function draw(div, figure) {
    if (!window.Plotly) {
      div.textContent = "no chart: /static/plotly.min.js did not load (is plotly installed? " +
        "pip install 'gpurent[server]')";
      div.className += " error";
      return null;
    }
    var config = Object.assign({}, CONFIG, figure.config || {});
    return window.Plotly.react(div, figure.data || [], figure.layout || {}, config);
  }

  function seriesFigure(reply) {
    var data = (reply.series || []).map(function (s) {
      return { type: "scatter", mode: "lines", name: s.name, x: s.x, y: s.y };
    });
    var layout = {
      title: { text: reply.title || "" },
      xaxis: { title: { text: reply.x_title || "" } },
      yaxis: { title: { text: reply.y_title || "" } },
      margin: { t: 40, r: 20 },
    };
    return { data: data, layout: layout };
  }

  // /api/monitor/series answers {"machine", "gpus": [{"gpu", "name", "timestamp_s": [...],
  // "activity_pct": [...], "power_w": [...], ...}]}: one trace per GPU of one field against UTC
  // time, as report/pages_monitor.py's series_figure draws the monitor page's first view.
  function gpuSeries(field, yTitle) {
    return function (reply) {
      var data = (reply.gpus || []).map(function (g) {
        return {
          type: "scatter",
          mode: "lines",
          name: "GPU " + g.gpu + (g.name ? " " + g.name : ""),
          x: g.timestamp_s.map(function (t) { return new Date(t * 1000).toISOString(); }),
          y: g[field],
        };
      });
      var layout = {
        xaxis: { title: { text: "time (UTC)" }, type: "date" },
        yaxis: { title: { text: yTitle }, rangemode: "tozero" },
        margin: { t: 50, r: 20 },
        legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
        height: 320,
      };
      return { data: data, layout: layout };
    };
  }

  var transforms = {
    figure: function (reply) { return reply; },
    series: seriesFigure,
    "gpu-activity": gpuSeries("activity_pct", "GPU utilisation (%)"),
    "gpu-power": gpuSeries("power_w", "power (W)"),
  };

  // A spend table, <table data-live-spend="/api/spend" data-live-every-s="2">, with a row
  // <tr data-machine="NAME"> per machine and cells <td data-key="spent_usd" data-format="usd">:
  // each cell follows /api/spend's entry for its machine (formats as report/pages_monitor.py's
  // cell_text: usd "$1,234.56", int, text; null "-").
  function cellText(value, kind) {
    if (value === null || value === undefined) {
      return "-";
    }
    if (kind === "usd") {
      return "$" + Number(value).toLocaleString("en-US",
        { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    if (kind === "int") {
      return String(Math.trunc(Number(value)));
    }
    return String(value);
  }

  function liveSpend(table) {
    var url = table.getAttribute("data-live-spend");
    var periodMs = Math.max(1, Number(table.getAttribute("data-live-every-s")) || 5) * 1000;
    function tick() {
      fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) {
            throw new Error(url + " answered " + response.status);
          }
          return response.json();
        })
        .then(function (reply) {
          (reply.machines || []).forEach(function (m) {
            table.querySelectorAll("tr[data-machine]").forEach(function (row) {
              if (row.getAttribute("data-machine") !== m.machine) {
                return;
              }
              row.querySelectorAll("td[data-key]").forEach(function (td) {
                td.textContent = cellText(m[td.getAttribute("data-key")],
                  td.getAttribute("data-format"));
              });
            });
          });
          table.setAttribute("data-live-updated", new Date().toISOString());
        })
        .catch(function () { /* keep the last numbers */ })
        .finally(function () { window.setTimeout(tick, periodMs); });
    }
    window.setTimeout(tick, periodMs);
  }

  function transformFor(name) {
    var key = name || "figure";
    if (typeof key === "function") {
      return key;
    }
    if (!transforms[key]) {
      throw new Error("gpurent: no transform named " + key);
    }
    return transforms[key];
  }

  function status(div, text) {
    var id = div.getAttribute("data-live-status");
    var element = id ? document.getElementById(id) : null;
    if (element) {
      element.textContent = text;
    }
  }

  // Poll `url` every `everyS` seconds (at least 1) and redraw `div`; returns a function that
  // stops the polling. A failed fetch keeps the last figure and says so in the status element.
  function live(url, div, everyS, transform) {
    var toFigure = transformFor(transform);
    var periodMs = Math.max(1, Number(everyS) || 5) * 1000;
    var stopped = false;
    var timer = null;
    function tick() {
      fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) {
            throw new Error(url + " answered " + response.status);
          }
          return response.json();
        })
        .then(function (reply) {
          draw(div, toFigure(reply));
          div.setAttribute("data-live-updated", new Date().toISOString());
          status(div, "updated " + new Date().toLocaleTimeString());
        })
        .catch(function (error) {
          status(div, "not updated: " + error.message);
        })
        .finally(function () {
          if (!stopped) {
            timer = window.setTimeout(tick, periodMs);
          }
        });
    }
    tick();
    return function stop() {
      stopped = true;
      if (timer !== null) {
        window.clearTimeout(timer);
      }
    };
  }

  function drawAll(root) {
    var scope = root || document;
    scope.querySelectorAll("[data-chart]").forEach(function (div) {
      draw(div, readJson(div.getAttribute("data-chart")));
    });
    scope.querySelectorAll("[data-live-url]").forEach(function (div) {
      live(
        div.getAttribute("data-live-url"),
        div,
        div.getAttribute("data-live-every-s"),
        div.getAttribute("data-live-transform")
      );
    });
    scope.querySelectorAll("[data-live-spend]").forEach(liveSpend);
  }

  window.gpurent = {
    readJson: readJson,
    draw: draw,
    drawAll: drawAll,
    live: live,
    transforms: transforms,
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { drawAll(); });
  } else {
    drawAll();
  }
})();
