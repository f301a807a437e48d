"use strict";
// Draws report.html from the model serbench embedded (report.json's content): no network, no
// library. Every figure shown comes from the model; the page only filters, sorts and divides.
const model = JSON.parse(document.getElementById("data").textContent);
// Each arm's place in the model, the value of its option in the pair selects.
model.arms.forEach((arm, index) => (arm.index = index));
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {}))
    node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}
function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {}))
    node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

// Three significant digits, grouped thousands above.
function digits(value) {
  if (value === null || value === undefined || !isFinite(value)) return "-";
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString("en-US");
  if (magnitude === 0) return "0";
  return value.toPrecision(3);
}
// One unit per column, chosen from the column's median, so a column reads in one unit.
const TIME_UNITS = [
  ["ns", 1],
  ["µs", 1e3],
  ["ms", 1e6],
  ["s", 1e9],
];
function timeUnit(values) {
  const sorted = values
    .filter((v) => v !== null && isFinite(v))
    .sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 1;
  let unit = TIME_UNITS[0];
  for (const candidate of TIME_UNITS)
    if (median >= candidate[1]) unit = candidate;
  return unit;
}
function count(value) {
  if (value === null || value === undefined) return "-";
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
function ratioText(value) {
  return value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

const hostLabel = (arm) => model.hosts[arm.host].label;
const colour = (format) => model.colours[format] || "#777777";
const measured = (arm) => arm.status === "ok" && arm.ns_per_record !== null;
// A time interval is mean ± Student-t half-width: with few reps (smoke) its low end can be 0 or
// below, which bounds nothing. Such a low end is drawn clipped at the axis, shown as "≤ 0", and
// no ratio interval or cost is derived from it.
const bounded = (arm) => arm.low !== null && arm.low > 0;

// ---- hosts
(function hosts() {
  const rows = [
    ["host", (h) => h.host.host],
    ["CPU", (h) => h.host.cpu],
    ["cores", (h) => String(h.host.cores)],
    ["OS", (h) => h.host.os],
    ["system", (h) => h.host.system],
    ["rustc", (h) => h.host.rustc],
    ["commit", (h) => h.host.commit],
    ["build", (h) => h.host.build],
    [
      "environment",
      (h) =>
        h.host.environment + (h.emulated ? " (emulated: in no ranking)" : ""),
    ],
    ["profile", (h) => h.profile],
    ["run started", (h) => h.started],
  ];
  const table = $("host-table");
  table.append(
    el("tr", {}, el("th"), ...model.hosts.map((h) => el("th", {}, h.label))),
  );
  for (const [name, get] of rows)
    table.append(
      el(
        "tr",
        {},
        el("th", {}, name),
        ...model.hosts.map((h) => el("td", {}, get(h))),
      ),
    );
  const arms = model.arms.length,
    ok = model.arms.filter(measured).length;
  $("summary").textContent =
    `${arms} arms on ${model.hosts.length} host(s), ${ok} measured; serbench ${model.serbench}.`;
})();

// ---- filters
const FILTERS = [
  ["payload", (a) => a.payload],
  ["operation", (a) => a.operation],
  ["mode", (a) => a.mode],
  ["framing", (a) => a.framing],
  ["format", (a) => a.format],
  ["host", hostLabel],
];
for (const [name, get] of FILTERS) {
  const values = [...new Set(model.arms.map(get))];
  const select = el(
    "select",
    { id: `filter-${name}`, name },
    el("option", { value: "" }, "all"),
  );
  for (const value of values) select.append(el("option", { value }, value));
  select.addEventListener("change", render);
  $("filters").append(el("label", {}, `${name} `, select));
}
function filtered() {
  const chosen = FILTERS.map(([name, get]) => [$(`filter-${name}`).value, get]);
  return model.arms.filter((arm) =>
    chosen.every(([value, get]) => value === "" || get(arm) === value),
  );
}

// ---- the arm table
const COLUMNS = [
  { name: "payload", get: (a) => a.payload },
  { name: "op", get: (a) => a.operation },
  { name: "mode", get: (a) => a.mode },
  { name: "framing", get: (a) => a.framing },
  // The rank serbench computed (ties share one, "=1"): sorted by place, shown as written.
  {
    name: "rank",
    numeric: true,
    get: (a) => (a.rank ? a.rank.place : null),
  },
  { name: "arm", get: (a) => a.label + (a.baseline ? " (baseline)" : "") },
  { name: "host", get: hostLabel },
  {
    name: "time/record",
    numeric: true,
    time: true,
    get: (a) => a.ns_per_record,
  },
  { name: "95% CI", get: (a) => a.low },
  {
    name: "±",
    numeric: true,
    get: (a) =>
      a.low !== null && a.high !== null
        ? (a.high - a.low) / 2 / a.ns_per_record
        : null,
  },
  {
    name: "vs fastest [95% CI]",
    numeric: true,
    get: (a) => (a.fastest ? 1 : a.vs_fastest ? a.vs_fastest.ratio : null),
  },
  { name: "MB/s", numeric: true, get: (a) => a.mb_per_s },
  { name: "bytes/op", numeric: true, get: (a) => a.encoded_bytes },
  { name: "allocs/op", numeric: true, get: (a) => a.allocs_per_op },
];
const columnIndex = (name) => COLUMNS.findIndex((c) => c.name === name);
let sortColumn = columnIndex("time/record"),
  sortDescending = false;
function cells(arm, unit) {
  const [unitName, scale] = unit;
  const time = (value) => (value === null ? "-" : digits(value / scale));
  const half = COLUMNS[columnIndex("±")].get(arm);
  let versus = "-";
  if (model.hosts[arm.host].emulated) versus = "(emulated)";
  else if (arm.fastest) versus = "fastest";
  else if (arm.vs_fastest) {
    const r = arm.vs_fastest;
    versus = `${ratioText(r.ratio)}x [${ratioText(r.low)}, ${ratioText(r.high)}]${r.paired ? "" : " *"}`;
  }
  return [
    arm.payload,
    arm.operation,
    arm.mode,
    arm.framing,
    arm.rank ? arm.rank.text : "-",
    COLUMNS[columnIndex("arm")].get(arm),
    hostLabel(arm),
    measured(arm) ? `${time(arm.ns_per_record)} ${unitName}` : arm.status,
    arm.low === null
      ? "-"
      : `[${bounded(arm) ? time(arm.low) : "≤ 0"}, ${time(arm.high)}]`,
    half === null ? "-" : `${(half * 100).toFixed(1)}%`,
    versus,
    digits(arm.mb_per_s),
    count(arm.encoded_bytes),
    count(arm.allocs_per_op),
  ];
}
function renderTable(arms) {
  const column = COLUMNS[sortColumn];
  const key = (arm) => column.get(arm);
  const sorted = [...arms].sort((a, b) => {
    const x = key(a),
      y = key(b);
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order =
      typeof x === "number" ? x - y : String(x).localeCompare(String(y));
    return sortDescending ? -order : order;
  });
  const unit = timeUnit(arms.map((a) => a.ns_per_record));
  const head = $("arm-table").tHead;
  head.replaceChildren(
    el(
      "tr",
      {},
      ...COLUMNS.map((c, index) => {
        const name = c.time ? `${c.name} (${unit[0]})` : c.name;
        const th = el(
          "th",
          { class: c.numeric ? "num" : "", "data-column": String(index) },
          name,
        );
        if (index === sortColumn)
          th.setAttribute(
            "aria-sort",
            sortDescending ? "descending" : "ascending",
          );
        th.addEventListener("click", () => {
          sortDescending = index === sortColumn ? !sortDescending : false;
          sortColumn = index;
          render();
        });
        return th;
      }),
    ),
  );
  const body = $("arm-table").tBodies[0];
  body.replaceChildren(
    ...sorted.map((arm) => {
      const row = el(
        "tr",
        {
          "data-ns":
            arm.ns_per_record === null ? "" : String(arm.ns_per_record),
          "data-mbps": arm.mb_per_s === null ? "" : String(arm.mb_per_s),
        },
        ...cells(arm, unit).map((text, index) =>
          el("td", { class: COLUMNS[index].numeric ? "num" : "" }, text),
        ),
      );
      return row;
    }),
  );
  $("shown").textContent =
    `${sorted.length} of ${model.arms.length} arms shown; click a column to sort.`;
}

// ---- charts: one per payload, operation and mode of the shown arms
const CHART_LIMIT = 12;
function renderCharts(arms) {
  const sections = new Map();
  for (const arm of arms.filter(measured)) {
    // Typed, borrowed and dynamic decodes are different jobs: each mode its own chart.
    const key = `${arm.payload} ${arm.operation}${arm.mode === "typed" ? "" : " " + arm.mode}`;
    if (!sections.has(key)) sections.set(key, []);
    sections.get(key).push(arm);
  }
  const list = $("chart-list");
  list.replaceChildren();
  const formats = new Set();
  let drawn = 0;
  for (const [title, bars] of sections) {
    if (drawn === CHART_LIMIT) {
      list.append(
        el(
          "p",
          { class: "muted" },
          `${sections.size - CHART_LIMIT} more charts: narrow the filters to see them.`,
        ),
      );
      break;
    }
    drawn += 1;
    bars.sort((a, b) => a.ns_per_record - b.ns_per_record);
    bars.forEach((bar) => formats.add(bar.format));
    list.append(chart(title, bars));
  }
  renderSizes(arms, list, formats);
  $("legend").replaceChildren(
    ...[...formats]
      .sort()
      .map((format) =>
        el(
          "span",
          {},
          el("i", { style: `background:${colour(format)}` }),
          format,
        ),
      ),
  );
}
// An SVG chart of `width` x `height` with its accessible label and its title line.
function figure(width, height, label, title) {
  return svg(
    "svg",
    {
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": label,
    },
    svg("text", { x: 0, y: 14, "font-weight": "bold" }, title),
  );
}
// Sizes of the shown payloads and formats: one row per distinct encoding (codecs of one format
// that write the same bytes share a row, named together), its encoded, zstd and zlib bytes side
// by side on a linear axis from zero (bytes add up, so lengths compare).
function renderSizes(arms, list, formats) {
  const payloads = new Set(arms.map((a) => a.payload));
  const shownFormats = new Set(arms.map((a) => a.format));
  for (const payload of payloads) {
    const groups = new Map();
    for (const size of model.sizes) {
      if (
        size.payload !== payload ||
        !shownFormats.has(size.format) ||
        size.encoded === null
      )
        continue;
      const key = `${size.format} ${size.encoded} ${size.zstd} ${size.zlib}`;
      if (!groups.has(key)) groups.set(key, { size, labels: [] });
      groups
        .get(key)
        .labels.push(
          size.label.replace(`${size.format}/`, "") +
            (size.framing === "document" ? "" : ` ${size.framing}`),
        );
    }
    if (groups.size === 0) continue;
    const rows = [...groups.values()].sort(
      (a, b) => a.size.encoded - b.size.encoded,
    );
    rows.forEach((group) => formats.add(group.size.format));
    list.append(sizeChart(payload, rows));
  }
}
function sizeChart(payload, rows) {
  const band = 13,
    row = 3 * band + 6,
    left = 330,
    width = 900,
    top = 36,
    plot = width - left - 80;
  const height = top + rows.length * row + 10;
  const high = Math.max(...rows.map((r) => r.size.encoded)) * 1.05;
  const x = (bytes) => left + (bytes / high) * plot;
  const image = figure(
    width,
    height,
    `${payload}: bytes`,
    `${payload}: bytes (encoded, zstd, zlib; linear axis)`,
  );
  image.append(
    svg(
      "text",
      { x: 0, y: 28, class: "muted" },
      "codecs of one format that write the same bytes share a row",
    ),
  );
  rows.forEach((group, index) => {
    const y = top + index * row;
    const name = `${group.size.format}: ${group.labels.join(", ")}`;
    image.append(
      svg(
        "text",
        { x: left - 6, y: y + band + 6, "text-anchor": "end" },
        name.length > 52 ? name.slice(0, 51) + "…" : name,
      ),
    );
    [
      ["encoded", 1],
      ["zstd", 0.7],
      ["zlib", 0.45],
    ].forEach(([kind, opacity], band_index) => {
      const bytes = group.size[kind];
      if (bytes === null || bytes === undefined) return;
      const top_y = y + band_index * band;
      image.append(
        svg("rect", {
          x: left,
          y: top_y,
          width: Math.max(1, x(bytes) - left),
          height: band - 2,
          fill: colour(group.size.format),
          "fill-opacity": opacity,
          "data-bytes": String(bytes),
          "data-kind": kind,
        }),
      );
      image.append(
        svg(
          "text",
          { x: x(bytes) + 4, y: top_y + band - 3 },
          `${count(bytes)} ${kind}`,
        ),
      );
    });
  });
  return el("div", { class: "chart sizes" }, image);
}
function chart(title, bars) {
  const row = 16,
    left = 330,
    width = 900,
    top = 22,
    plot = width - left - 60;
  const height = top + bars.length * row + 28;
  // The axis spans the positive ends only: a whisker reaching 0 or below is clipped at it.
  const low =
    Math.min(...bars.map((b) => (bounded(b) ? b.low : b.ns_per_record))) / 1.2;
  const high = Math.max(...bars.map((b) => b.high ?? b.ns_per_record)) * 1.2;
  const x = (value) =>
    left + (Math.log(value / low) / Math.log(high / low)) * plot;
  const chartSvg = figure(
    width,
    height,
    `${title}: time per record`,
    `${title}: time per record (log axis)`,
  );
  bars.forEach((bar, index) => {
    const y = top + index * row;
    const name = `${bar.label}${model.hosts.length > 1 ? " · " + hostLabel(bar) : ""}`;
    chartSvg.append(
      svg(
        "text",
        { x: left - 6, y: y + 11, "text-anchor": "end" },
        name.length > 52 ? name.slice(0, 51) + "…" : name,
      ),
    );
    chartSvg.append(
      svg("rect", {
        x: left,
        y: y + 2,
        width: Math.max(1, x(bar.ns_per_record) - left),
        height: row - 4,
        fill: bar.baseline ? "#a0a0a0" : colour(bar.format),
        "data-ns": String(bar.ns_per_record),
      }),
    );
    if (bar.low !== null)
      chartSvg.append(
        svg("line", {
          x1: bounded(bar) ? x(bar.low) : left,
          x2: x(bar.high),
          y1: y + row / 2,
          y2: y + row / 2,
          stroke: "#222",
          "stroke-width": 1.2,
          // Dashed: the interval reaches 0 and is clipped at the axis.
          ...(bounded(bar)
            ? {}
            : { "stroke-dasharray": "3 2", "data-clipped": "" }),
        }),
      );
    chartSvg.append(
      svg(
        "text",
        { x: x(bar.high ?? bar.ns_per_record) + 4, y: y + 11 },
        `${digits(bar.ns_per_record)} ns`,
      ),
    );
  });
  return el("div", { class: "chart" }, chartSvg);
}

// ---- two arms compared, hyperfine's sentence
function armName(arm) {
  return `${arm.label} — ${arm.payload} ${arm.operation}${model.hosts.length > 1 ? " — " + hostLabel(arm) : ""}`;
}
function renderPair(arms) {
  const choices = arms.filter(measured).filter((a) => a.low !== null);
  for (const id of ["pair-a", "pair-b"]) {
    const select = $(id),
      before = select.value;
    select.replaceChildren(
      ...choices.map((arm) =>
        el("option", { value: String(arm.index) }, armName(arm)),
      ),
    );
    if (choices.some((arm) => String(arm.index) === before))
      select.value = before;
  }
  if (choices.length > 1 && $("pair-a").value === $("pair-b").value)
    $("pair-b").selectedIndex = 1;
  comparePair();
}
function comparePair() {
  const a = model.arms[Number($("pair-a").value)],
    b = model.arms[Number($("pair-b").value)];
  if (!a || !b) {
    $("pair-result").textContent =
      "Fewer than two arms with intervals are shown.";
    return;
  }
  const [ratio, lowRatio, highRatio, basis] = pairRatio(a, b);
  const faster = ratio <= 1;
  const factor = faster ? 1 / ratio : ratio;
  if (lowRatio === null) {
    const unbounded = [a, b]
      .filter((arm) => !bounded(arm))
      .map((arm) => arm.label);
    $("pair-result").replaceChildren(
      el(
        "strong",
        {
          id: "pair-sentence",
          "data-ratio": String(ratio),
          "data-basis": basis,
        },
        `${a.label} ran ${factor.toFixed(2)} times ${faster ? "faster" : "slower"} than ${b.label}`,
      ),
      ` (A/B = ${ratioText(ratio)}, ${basis}; no interval: the 95% interval of ${unbounded.join(" and ")} reaches 0, too few reps to bound the ratio).`,
    );
    return;
  }
  const half = faster
    ? (1 / lowRatio - 1 / highRatio) / 2
    : (highRatio - lowRatio) / 2;
  const holds = lowRatio <= 1 && 1 <= highRatio;
  // A tie as serbench words it: the interval holds 1, or lies inside the shift a code layout
  // alone makes (the model's layout_spread); never "faster" or "slower".
  const spread = model.layout_spread;
  if (holds || (1 / (1 + spread) <= lowRatio && highRatio <= 1 + spread)) {
    const why = holds
      ? "the interval holds 1: no measurable difference"
      : `inside the ±${+(spread * 100).toFixed(1)}% a code layout alone moves an arm`;
    $("pair-result").replaceChildren(
      el(
        "strong",
        {
          id: "pair-sentence",
          "data-ratio": String(ratio),
          "data-low": String(lowRatio),
          "data-high": String(highRatio),
          "data-basis": basis,
          "data-tie": holds ? "holds-one" : "layout",
        },
        `${a.label} and ${b.label} are indistinguishable`,
      ),
      ` (A/B = ${ratioText(ratio)} [${ratioText(lowRatio)}, ${ratioText(highRatio)}], 95%, ${basis}; ${why}).`,
    );
    return;
  }
  $("pair-result").replaceChildren(
    el(
      "strong",
      {
        id: "pair-sentence",
        "data-ratio": String(ratio),
        "data-low": String(lowRatio),
        "data-high": String(highRatio),
        "data-basis": basis,
      },
      `${a.label} ran ${factor.toFixed(2)} ± ${half.toFixed(2)} times ${faster ? "faster" : "slower"} than ${b.label}`,
    ),
    ` (A/B = ${ratioText(ratio)} [${ratioText(lowRatio)}, ${ratioText(highRatio)}], 95%, ${basis}).`,
  );
}
// As serbench computes it: paired over the workers of one host that measured both arms (the t
// interval of the mean log-ratio), else unpaired from the arms' own intervals (their relative
// half-widths combined in quadrature on the log scale).
function pairRatio(a, b) {
  const bWorkers = new Map(b.workers.map(([pass, ns]) => [pass, ns]));
  const logs =
    a.host === b.host
      ? a.workers
          .filter(([pass]) => bWorkers.has(pass))
          .map(([pass, ns]) => Math.log(ns / bWorkers.get(pass)))
      : [];
  if (logs.length >= 2) {
    const n = logs.length;
    const mean = logs.reduce((sum, value) => sum + value, 0) / n;
    const variance =
      logs.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1);
    const half =
      model.t975[Math.min(n - 1, model.t975.length) - 1] *
      Math.sqrt(variance / n);
    return [
      Math.exp(mean),
      Math.exp(mean - half),
      Math.exp(mean + half),
      `paired over ${n} workers`,
    ];
  }
  const relative = (arm) => (arm.high - arm.low) / 2 / arm.ns_per_record;
  const ratio = a.ns_per_record / b.ns_per_record;
  if (!bounded(a) || !bounded(b)) return [ratio, null, null, "unpaired"];
  const spread = Math.exp(Math.hypot(relative(a), relative(b)));
  return [ratio, ratio / spread, ratio * spread, "unpaired"];
}
$("pair-a").addEventListener("change", comparePair);
$("pair-b").addEventListener("change", comparePair);

// ---- cost calculator
const measuredHosts = model.hosts
  .map((h, index) => [h, index])
  .filter(([h]) => !h.emulated);
for (const [h, index] of measuredHosts)
  $("calc-host").append(el("option", { value: String(index) }, h.label));
const calcPayloads = [
  ...new Set(
    model.arms
      .filter(
        (a) =>
          a.mode === "typed" &&
          a.framing === "document" &&
          a.operation === "encode",
      )
      .map((a) => a.payload),
  ),
];
for (const payload of calcPayloads)
  $("calc-payload").append(el("option", { value: payload }, payload));
for (const id of [
  "calc-rate",
  "calc-payload",
  "calc-compression",
  "calc-host",
  "calc-core-hour",
  "calc-gb-transfer",
  "calc-gb-month",
]) {
  $(id).addEventListener("input", renderCalculator);
  $(id).addEventListener("change", renderCalculator);
}
// Cores, MB/s and GB/day for one message stream; intervals from the arms' own.
function calculatorRows(rate, payload, compression, host) {
  const rows = [];
  const arms = model.arms.filter(
    (a) =>
      a.host === host &&
      a.payload === payload &&
      a.mode === "typed" &&
      a.framing === "document" &&
      measured(a),
  );
  for (const size of model.sizes.filter(
    (s) => s.payload === payload && s.framing === "document",
  )) {
    const encode = arms.find(
      (a) => a.operation === "encode" && a.label === size.label,
    );
    const decode = arms.find(
      (a) => a.operation === "decode" && a.label === size.label,
    );
    const bytes = size[compression];
    if (!encode || !decode || bytes === null || bytes === undefined) continue;
    // A low end at or below 0 (see `bounded`) is 0 cores, never fewer.
    const cores = (arm, value) =>
      (Math.max(0, value) * arm.records * rate) / 1e9;
    rows.push({
      label: size.label,
      format: size.format,
      encode: [
        cores(encode, encode.ns_per_record),
        cores(encode, encode.low),
        cores(encode, encode.high),
      ],
      decode: [
        cores(decode, decode.ns_per_record),
        cores(decode, decode.low),
        cores(decode, decode.high),
      ],
      megabytesPerSecond: (bytes * rate) / 1e6,
      gigabytesPerDay: (bytes * rate * 86400) / 1e9,
      bytes,
    });
  }
  return rows;
}
// A month's cost of each row at the reader's prices (730 hours; the month's bytes transferred
// once and kept for the month), [value, low, high] from the cores' intervals, the bottleneck
// the larger share; rows ranked by cost.
const HOURS_PER_MONTH = 730;
function priced(rows, coreHour, gbTransfer, gbMonth) {
  for (const row of rows) {
    const gigabytes = (row.gigabytesPerDay * HOURS_PER_MONTH) / 24;
    const bytesCost = gigabytes * (gbTransfer + gbMonth);
    const cpu = [0, 1, 2].map(
      (i) => (row.encode[i] + row.decode[i]) * HOURS_PER_MONTH * coreHour,
    );
    row.cost = cpu.map((value) => value + bytesCost);
    row.bottleneck = cpu[0] >= bytesCost ? "CPU" : "bytes";
  }
  return rows.sort((a, b) => a.cost[0] - b.cost[0]);
}
function renderCalculator() {
  const rate = Number($("calc-rate").value) || 0;
  const rows =
    measuredHosts.length === 0
      ? []
      : calculatorRows(
          rate,
          $("calc-payload").value,
          $("calc-compression").value,
          Number($("calc-host").value),
        );
  const price = (id) => Math.max(0, Number($(id).value) || 0);
  priced(
    rows,
    price("calc-core-hour"),
    price("calc-gb-transfer"),
    price("calc-gb-month"),
  );
  const head = [
    "codec",
    "encode cores [95% CI]",
    "decode cores [95% CI]",
    "bytes/message",
    "MB/s",
    "GB/day",
    "$/month [95% CI]",
    "bottleneck",
  ];
  $("calc-table").tHead.replaceChildren(
    el(
      "tr",
      {},
      ...head.map((name, index) =>
        el("th", { class: index ? "num" : "" }, name),
      ),
    ),
  );
  const interval = ([value, low, high]) =>
    `${digits(value)} [${digits(low)}, ${digits(high)}]`;
  $("calc-table").tBodies[0].replaceChildren(
    ...rows.map((row) =>
      el(
        "tr",
        {
          "data-codec": row.label,
          "data-encode-cores": String(row.encode[0]),
          "data-decode-cores": String(row.decode[0]),
          "data-mb-per-second": String(row.megabytesPerSecond),
          "data-gb-per-day": String(row.gigabytesPerDay),
          "data-cost": String(row.cost[0]),
          "data-bottleneck": row.bottleneck,
        },
        el("td", {}, row.label),
        el("td", { class: "num" }, interval(row.encode)),
        el("td", { class: "num" }, interval(row.decode)),
        el("td", { class: "num" }, count(row.bytes)),
        el("td", { class: "num" }, digits(row.megabytesPerSecond)),
        el("td", { class: "num" }, digits(row.gigabytesPerDay)),
        el("td", { class: "num" }, interval(row.cost)),
        el("td", {}, row.bottleneck),
      ),
    ),
  );
}

// ---- the answer: the model's answers as computed in Rust, and each payload's scatter
// What the reader may require (the capability table's columns); a backend qualifies when every
// ticked one holds for its row. Evolution and hostile input need their files (evolution.csv,
// robustness.csv): without one the box is shown and cannot be ticked.
const capabilityOf = new Map(
  model.capabilities.map((row) => [`${row.format}/${row.backend}`, row]),
);
const CONSTRAINTS = [
  ["self-describing", "self-describing bytes", (c) => c.self_describing],
  [
    "other-language",
    "readable from another language",
    (c) => c.languages.some((language) => language !== "Rust"),
  ],
  [
    "untrusted",
    "safe on untrusted input (no panic, hang, crash or over-cap in robustness.csv)",
    (c) => c.hostile !== null && !c.hostile.failure,
  ],
  [
    "evolution",
    "survives added and removed optional fields and renamed fields, both ways (from evolution.csv)",
    (c) => c.evolved !== null && c.evolved.survives,
  ],
  ["zero-copy", "zero-copy access", (c) => c.zero_copy],
  ["no-unsafe", "no unsafe in its crates", (c) => c.unsafe_keywords === 0],
  ["no-advisory", "no known advisory", (c) => c.advisories.length === 0],
];
function ticked() {
  return CONSTRAINTS.filter(([id]) => $(`need-${id}`)?.checked);
}
function qualifies(item) {
  const row = capabilityOf.get(`${item.format}/${item.backend}`);
  return ticked().every(([, , holds]) => row !== undefined && holds(row));
}
// The first rank among the items that qualify: those of the smallest place Rust gave.
function firstQualifying(items) {
  const shown = items.filter(qualifies);
  const place = Math.min(...shown.map((item) => item.rank.place));
  return shown.filter((item) => item.rank.place === place);
}
// The points that qualify, each on the front when no qualifying point beats it (Rust lists who
// beats whom).
function qualifyingPoints(answer) {
  const shown = answer.points.filter(qualifies);
  const labels = new Set(shown.map((point) => point.label));
  return shown.map((point) => ({
    ...point,
    front: !point.beaten_by.some((label) => labels.has(label)),
  }));
}
(function constraints() {
  const box = $("constraints");
  const known = {
    untrusted: model.capabilities.some((row) => row.hostile !== null),
    evolution: model.capabilities.some((row) => row.evolved !== null),
  };
  for (const [id, text] of CONSTRAINTS) {
    const input = el("input", { type: "checkbox", id: `need-${id}` });
    const missing = known[id] === false;
    if (missing) input.disabled = true;
    input.addEventListener("change", renderAnswer);
    box.append(
      el(
        "label",
        missing ? { class: "muted" } : {},
        input,
        ` ${text}${missing ? " (not in this report)" : ""}`,
      ),
    );
  }
})();
function renderAnswer() {
  const host = model.hosts[0];
  if (!host || model.answers.length === 0) {
    $("answer").hidden = true;
    return;
  }
  const needs = ticked().map(([, text]) => text);
  $("answer-intro").textContent =
    `On ${host.label}, per record: the cheapest to decode and to encode (the first rank: ` +
    "names joined by = are those a rerun could order either way), the fewest bytes encoded " +
    "and after zstd, and the front of round-trip time against bytes. Typed arms where the " +
    "payload has them, else dynamic." +
    (needs.length ? ` Only backends with: ${needs.join("; ")}.` : "");
  const first = (items, figure) => {
    const tied = firstQualifying(items);
    if (tied.length === 0) return "-";
    return `${tied.map((item) => item.label).join(" = ")} ${tied[0][figure]}`;
  };
  const table = $("answer-table");
  table.replaceChildren(
    el(
      "tr",
      {},
      ...["payload", "decode", "encode", "bytes", "zstd bytes", "front"].map(
        (name) => el("th", {}, name),
      ),
    ),
  );
  $("scatter-list").replaceChildren();
  for (const answer of model.answers) {
    const points = qualifyingPoints(answer);
    const front = points
      .filter((point) => point.front)
      .map((point) => `${point.label} ${point.time}, ${point.size}`)
      .join("; ");
    table.append(
      el(
        "tr",
        { "data-payload": answer.payload },
        el(
          "td",
          {},
          answer.mode === "typed"
            ? answer.payload
            : `${answer.payload} (${answer.mode})`,
        ),
        el("td", {}, first(answer.decode, "time")),
        el("td", {}, first(answer.encode, "time")),
        el("td", {}, first(answer.bytes, "size")),
        el("td", {}, first(answer.zstd, "size")),
        el("td", {}, front || "-"),
      ),
    );
    if (points.length > 0) $("scatter-list").append(scatter(answer, points));
  }
}
renderAnswer();
// ---- capabilities: the model's table as Rust derived it
(function capabilities() {
  const table = $("capability-table");
  const hostile = model.capabilities.some((row) => row.hostile !== null);
  const columns = [
    ["format", (c) => c.format],
    ["backend", (c) => c.backend],
    ["self-describing", (c) => (c.self_describing ? "yes" : "no")],
    ["schema", (c) => c.schema],
    ["evolution (documented)", (c) => c.evolution],
    [
      "zero-copy",
      (c) =>
        c.zero_copy ? (c.in_place_update ? "access, update" : "access") : "no",
    ],
    [
      "unsafe",
      (c) => (c.unsafe_keywords === null ? "-" : String(c.unsafe_keywords)),
    ],
    ["languages", (c) => `${c.languages.length} (${c.languages.join(", ")})`],
    ["crates", (c) => c.crates.join("; ") || "-"],
    ["advisories", (c) => c.advisories.join("; ") || "none known"],
  ];
  if (model.capabilities.some((row) => row.evolved !== null))
    columns.push([
      "evolution (measured: new reads old / old reads new)",
      (c) => (c.evolved ? c.evolved.summary : "-"),
    ]);
  if (hostile)
    columns.push([
      "hostile input",
      (c) =>
        c.hostile
          ? `worst ${c.hostile.worst}; peak ${digits(c.hostile.peak_alloc_bytes)} B`
          : "-",
    ]);
  table.append(el("tr", {}, ...columns.map(([name]) => el("th", {}, name))));
  for (const row of model.capabilities)
    table.append(
      el(
        "tr",
        { "data-format": row.format, "data-backend": row.backend },
        ...columns.map(([, get]) => el("td", {}, get(row))),
      ),
    );
})();
// ---- schema evolution: the model's matrices, one table per payload
(function evolution() {
  if (model.evolution.length === 0) return;
  $("evolution").hidden = false;
  const list = $("evolution-list");
  for (const matrix of model.evolution) {
    const table = el(
      "table",
      { "data-payload": matrix.payload },
      el(
        "tr",
        {},
        el("th", {}, "backend"),
        ...matrix.changes.map((change) =>
          el("th", { title: change.what }, change.change),
        ),
      ),
    );
    for (const row of matrix.rows)
      table.append(
        el(
          "tr",
          { "data-label": row.label, title: row.mechanism },
          el("td", {}, row.label),
          ...row.cells.map((cell) =>
            el(
              "td",
              cell.includes("SILENTLY WRONG") ? { class: "wrong" } : {},
              cell,
            ),
          ),
        ),
      );
    list.append(
      el(
        "h3",
        {},
        `${matrix.payload} (${matrix.records} record${matrix.records === 1 ? "" : "s"})`,
      ),
      table,
    );
  }
})();
// Time (y, log) against bytes (x, log), one dot per codec with its 95% whisker; the front's
// dots ringed and joined, fastest first.
function scatter(answer, points) {
  const width = 900,
    height = 420,
    left = 80,
    right = 200,
    top = 36,
    bottom = 50;
  const span = (values) => {
    let low = Math.min(...values),
      high = Math.max(...values);
    if (!(low > 0)) low = Math.min(...values.filter((v) => v > 0), high);
    if (high / low < 1.5) [low, high] = [low / 1.25, high * 1.25];
    return [Math.log(low / 1.1), Math.log(high * 1.1)];
  };
  const [xLow, xHigh] = span(points.map((p) => p.bytes_per_record));
  const [yLow, yHigh] = span(
    points.flatMap((p) => [p.ns, p.high, p.low > 0 ? p.low : p.ns]),
  );
  const x = (bytes) =>
    left + ((Math.log(bytes) - xLow) / (xHigh - xLow)) * (width - left - right);
  const y = (ns) =>
    top +
    (1 - (Math.log(Math.max(ns, Math.exp(yLow))) - yLow) / (yHigh - yLow)) *
      (height - top - bottom);
  const image = figure(
    width,
    height,
    `${answer.payload}: round-trip time against bytes`,
    `${answer.payload}: round trip per record (log) against bytes per record (log)`,
  );
  image.setAttribute("data-payload", answer.payload);
  image.append(
    svg("line", {
      x1: left,
      y1: height - bottom,
      x2: width - right,
      y2: height - bottom,
      stroke: "#999",
    }),
    svg("line", {
      x1: left,
      y1: top,
      x2: left,
      y2: height - bottom,
      stroke: "#999",
    }),
    svg(
      "text",
      {
        x: (left + width - right) / 2,
        y: height - 12,
        "text-anchor": "middle",
      },
      "bytes per record",
    ),
    svg(
      "text",
      {
        x: 12,
        y: (top + height - bottom) / 2,
        transform: `rotate(-90 12 ${(top + height - bottom) / 2})`,
        "text-anchor": "middle",
      },
      "round trip per record",
    ),
  );
  // Ticks at 1, 2 and 5 times each power of ten inside the axis, labelled in one unit.
  const ticks = (low, high) => {
    const values = [];
    for (
      let power = Math.floor(low / Math.LN10);
      power <= Math.ceil(high / Math.LN10);
      power++
    )
      for (const step of [1, 2, 5]) {
        const value = step * 10 ** power;
        if (Math.log(value) >= low && Math.log(value) <= high)
          values.push(value);
      }
    return values;
  };
  for (const bytes of ticks(xLow, xHigh))
    image.append(
      svg(
        "text",
        {
          x: x(bytes),
          y: height - bottom + 16,
          "text-anchor": "middle",
          class: "tick",
        },
        `${digits(bytes)} B`,
      ),
    );
  const yTicks = ticks(yLow, yHigh);
  const [unit, scale] = timeUnit(yTicks);
  for (const ns of yTicks)
    image.append(
      svg(
        "text",
        { x: left - 6, y: y(ns) + 4, "text-anchor": "end", class: "tick" },
        `${digits(ns / scale)} ${unit}`,
      ),
    );
  const front = points.filter((p) => p.front);
  if (front.length > 1)
    image.append(
      svg("polyline", {
        points: front
          .map((p) => `${x(p.bytes_per_record)},${y(p.ns)}`)
          .join(" "),
        fill: "none",
        stroke: "#222",
        "stroke-dasharray": "4 3",
        class: "front-line",
      }),
    );
  for (const point of points) {
    const cx = x(point.bytes_per_record);
    const mark = svg(
      "g",
      {
        class: point.front ? "point front" : "point",
        "data-label": point.label,
        "data-ns": String(point.ns),
        "data-bytes": String(point.bytes_per_record),
      },
      svg("title", {}, `${point.label}: ${point.time}, ${point.size}`),
      svg("line", {
        x1: cx,
        x2: cx,
        y1: y(point.high),
        y2: y(point.low > 0 ? point.low : point.ns),
        stroke: colour(point.format),
        class: "whisker",
      }),
      svg("circle", {
        cx,
        cy: y(point.ns),
        r: point.front ? 6 : 4,
        fill: colour(point.format),
        stroke: point.front ? "#000" : "none",
        "stroke-width": 2,
      }),
    );
    if (point.front)
      mark.append(
        svg(
          "text",
          { x: cx + 9, y: y(point.ns) + 4 },
          `${point.label} ${point.time}, ${point.size}`,
        ),
      );
    image.append(mark);
  }
  return el("div", { class: "chart scatter" }, image);
}

function render() {
  const arms = filtered();
  renderTable(arms);
  renderCharts(arms);
  renderPair(arms);
}
render();
renderCalculator();
