// Small charts of our own, drawn as inline SVG or plain HTML bars (no library).

import { h, s } from "./dom.js";
import { gettext, interpolate } from "./i18n.js";

/** A tick step of 1, 2 or 5 × 10^n (at least 1: the charts count things). */
function niceStep(raw) {
  if (raw <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const step of [1, 2, 5, 10]) {
    if (raw <= step * power) return step * power;
  }
  return 10 * power;
}

/**
 * Stacked columns: buckets [{label, title, values: {series: n}}], series [{key, label}].
 * Colours come from CSS classes `fill-<key>`.
 */
export function stackedColumns(buckets, series, { height = 220, unit = "calls" } = {}) {
  const width = 800;
  const margin = { top: 10, right: 28, bottom: 26, left: 40 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const totals = buckets.map((b) => series.reduce((sum, item) => sum + (b.values[item.key] || 0), 0));
  const tickStep = niceStep(Math.max(1, ...totals) / 4);
  const max = tickStep * Math.max(1, Math.ceil(Math.max(1, ...totals) / tickStep));
  const step = plotW / Math.max(1, buckets.length);
  const barW = Math.max(2, step * 0.72);
  const y = (value) => margin.top + plotH - (value / max) * plotH;
  const ticks = Array.from({ length: Math.round(max / tickStep) + 1 }, (_, index) => index * tickStep);
  const labelEvery = Math.ceil(buckets.length / 8);

  const svg = s(
    "svg",
    { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": interpolate(gettext("Stacked column chart of %(unit)s over time"), { unit }, true) },
    s(
      "g",
      { class: "grid" },
      ticks.map((tick) => [
        s("line", { x1: margin.left, x2: width - margin.right, y1: y(tick), y2: y(tick) }),
        s("text", { x: margin.left - 6, y: y(tick) + 4, "text-anchor": "end" }, formatTick(tick)),
      ]),
    ),
    buckets.map((bucket, index) => {
      const x = margin.left + index * step + (step - barW) / 2;
      let base = 0;
      const parts = series.map((item) => {
        const value = bucket.values[item.key] || 0;
        if (!value) return null;
        const top = y(base + value);
        const rect = s(
          "rect",
          { class: `fill-${item.key}`, x, y: top, width: barW, height: Math.max(1, y(base) - top), rx: 2 },
          s("title", {}, `${bucket.title}: ${value} ${item.label}`),
        );
        base += value;
        return rect;
      });
      const label =
        index % labelEvery === 0
          ? s("text", { x: x + barW / 2, y: height - 8, "text-anchor": "middle" }, bucket.label)
          : null;
      return s("g", {}, parts, label);
    }),
  );
  const legend = h(
    "div",
    { class: "legend-row" },
    series.map((item) => h("span", {}, h("span", { class: `swatch fill-${item.key}` }), item.label)),
  );
  return h("div", {}, svg, legend);
}

function formatTick(value) {
  if (value >= 1000) return `${(value / 1000).toFixed(value >= 10000 ? 0 : 1)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** Horizontal bars: rows [{name, value, text, title}], widths relative to the largest. */
export function barList(rows, { fill = "bar" } = {}) {
  const max = Math.max(0, ...rows.map((row) => row.value)) || 1;
  return h(
    "ul",
    { class: "bars" },
    rows.map((row) =>
      h(
        "li",
        { title: row.title || "" },
        h("span", { class: "name" }, row.name),
        h("span", { class: "track" }, h("span", { class: `fill fill-${fill}`, style: `width: ${((row.value / max) * 100).toFixed(1)}%` })),
        h("span", { class: "val" }, row.text ?? String(row.value)),
      ),
    ),
  );
}

/** Two overlaid bars per row (p95 behind, p50 in front), on a shared scale. */
export function rangeBars(rows, { legend = ["p50", "p95"] } = {}) {
  const max = Math.max(0, ...rows.map((row) => row.high)) || 1;
  return h(
    "div",
    {},
    h(
      "ul",
      { class: "bars" },
      rows.map((row) =>
        h(
          "li",
          { title: row.title || "" },
          h("span", { class: "name" }, row.name),
          h(
            "span",
            { class: "track" },
            h("span", { class: "fill fill-p95", style: `width: ${((row.high / max) * 100).toFixed(1)}%` }),
            h("span", { class: "fill fill-p50", style: `width: ${((row.low / max) * 100).toFixed(1)}%` }),
          ),
          h("span", { class: "val" }, row.text),
        ),
      ),
    ),
    h(
      "div",
      { class: "legend-row" },
      h("span", {}, h("span", { class: "swatch fill-p50" }), legend[0]),
      h("span", {}, h("span", { class: "swatch fill-p95" }), legend[1]),
    ),
  );
}
