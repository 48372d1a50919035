#!/usr/bin/python3
"""Render a design-review report from a sweep's results.json (the renderer behind `scoville report`).

    /usr/bin/python3 scripts/scoville_report.py RESULTS_JSON --out DIR [--title TEXT] [--claims FILE.yaml]...

Writes DIR/index.html (self-contained: figures inlined as PNG data URIs), DIR/report.md and the
figures it references, DIR/figures/*.png. Other files in DIR (results.json, points.csv) are left alone.
Exit codes: 0 ok; 2 bad input (one `error[...]` line on stderr); 1 unexpected failure.
With --claims (a published claims file, workloads/validation/claims-*.yaml), the report opens with a
table of the claims beside the simulated values, printed on stdout too.
Needs the standard library, Debian's python3-matplotlib and (for --claims) python3-yaml.
"""

import argparse
import base64
import html
import io
import json
import math
import os
import sys
import textwrap
import traceback

RESULTS_SCHEMA_VERSION = 1
# report.json's power levels (docs/report.md), in the order of a byte's path out of HBM, and their names here.
LEVELS = ["hbm", "memory_interface", "llc", "noc", "sram", "register_file", "datapath", "vector_unit", "fabric_ports",
          "floor", "wake", "static", "switches"]
LEVEL_NAMES = {"hbm": "HBM core", "memory_interface": "PHY/controller", "llc": "L2/LLC", "noc": "NoC",
               "sram": "SRAM", "register_file": "register file", "datapath": "datapath", "vector_unit": "vector unit",
               "fabric_ports": "fabric ports", "floor": "clocked floor", "wake": "wake", "static": "static",
               "switches": "switches"}
REPLICA_TIMES = [("prefill_only_time_s", "prefill only"), ("decode_only_time_s", "decode only"),
                 ("mixed_time_s", "mixed"), ("idle_time_s", "idle")]
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf"]
MISSING = "—"


class InputError(Exception):
    """Bad input: reported as one `error[kind]: message` line and exit code 2."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# --- Small helpers ---------------------------------------------------------------------------

def get(obj, *path, default=None):
    """obj[path[0]][path[1]]..., or `default` where any step is absent or null."""
    for key in path:
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and isinstance(key, int) and -len(obj) <= key < len(obj):
            obj = obj[key]
        else:
            return default
        if obj is None:
            return default
    return obj


def obj(value):
    return value if isinstance(value, dict) else {}


def seq(value):
    return value if isinstance(value, list) else []


def number(value):
    """A finite float, or None (JSON null, text and booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fmt(value, scale=1.0, suffix=""):
    """Three significant figures; thousands separators rather than exponents for large values."""
    x = number(value)
    if x is None:
        return MISSING
    x = float(f"{x * scale:.3g}")  # round first, so that 999.7 becomes 1,000 rather than 1000
    magnitude = math.floor(math.log10(abs(x))) if x else 0
    if magnitude >= 3:
        text = f"{int(x):,}"
    elif magnitude >= -4:
        text = f"{x:.{max(0, 2 - magnitude)}f}" if x else "0"
    else:
        text = f"{x:.2e}"
    return text + suffix


def scaled(value, factor):
    value = number(value)
    return None if value is None else value * factor


def duration(seconds):
    """'10 µs', '1.5 ms', '2 s': bins and windows range from microseconds to seconds."""
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= factor or unit == "µs":
            return f"{seconds / factor:.3g} {unit}"


def plural(count, noun):
    return f"{count} {noun}{'' if count == 1 else 's'}"


def min_of(values):
    values = [v for v in map(number, values) if v is not None]
    return min(values) if values else None


def read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        kind = "file-not-found" if isinstance(e, FileNotFoundError) else "unreadable-file"
        raise InputError(kind, f"{what}{path}: cannot be read ({e.strerror})")
    except ValueError as e:
        raise InputError("wrong-schema", f"{what}{path}: not JSON ({e})")


def load_results(path):
    """results.json, checked for the schema this renderer understands."""
    results = read_json(path, "")
    version = results.get("schema_version") if isinstance(results, dict) else None
    if version != RESULTS_SCHEMA_VERSION:
        raise InputError("wrong-schema", f"{path}: schema_version {json.dumps(version)}, expected "
                         f"{RESULTS_SCHEMA_VERSION} (a results.json from `scoville merge` or `scoville sweep`)")
    if not isinstance(results.get("points"), list) or not all(isinstance(p, dict) for p in results["points"]):
        raise InputError("wrong-schema", f"{path}: `points` is not a list of objects")
    return results


def load_point_reports(results, base_dir):
    """Each point's full report.json (its `source` is relative to the directory of results.json)."""
    return [read_json(os.path.join(base_dir, str(p.get("source", ""))), f"point {p.get('id')}: ")
            for p in results["points"]]


# --- Document model: one list of blocks rendered to both HTML and Markdown, so they cannot drift ---

class Doc:
    """Blocks: ("h", level, text), ("p", text), ("list", items), ("table", header, rows),
    ("figure", file name, png bytes, caption), ("details", summary, Doc)."""

    def __init__(self):
        self.blocks, self.figures = [], []  # figures: (file name, png bytes), those in details too

    def add(self, *block):
        self.blocks.append(block)

    def figure(self, name, png, caption):
        name = f"{len(self.figures) + 1:02d}-{name}.png"
        self.figures.append((name, png))
        self.add("figure", name, png, caption)

    def details(self, summary, inner):
        self.figures.extend(inner.figures)
        self.add("details", summary, inner)


def md_escape(text):
    return "".join("\\" + c if c in "\\`*_[]<>|" else c for c in " ".join(str(text).splitlines()))


def render_markdown(doc):
    out = []
    for kind, *a in doc.blocks:
        if kind == "h":
            out.append("#" * a[0] + " " + md_escape(a[1]))
        elif kind == "p":
            out.append(md_escape(a[0]))
        elif kind == "list":
            out.append("\n".join("- " + md_escape(item) for item in a[0]))
        elif kind == "table":
            lines = ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in [a[0]] + a[1]]
            out.append("\n".join(lines[:1] + ["|" + " --- |" * len(a[0])] + lines[1:]))
        elif kind == "figure":
            out.append(f"![{md_escape(a[2])}](figures/{a[0]})\n\n*{md_escape(a[2])}*")
        elif kind == "details":
            out.append(f"<details>\n<summary>{html.escape(a[0])}</summary>\n\n{render_markdown(a[1])}\n</details>")
    return "\n\n".join(out) + "\n"


CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;line-height:1.4}
h1{border-bottom:2px solid #444}h2{border-bottom:1px solid #aaa;margin-top:2em}
table{border-collapse:collapse;font-size:85%;margin:1em 0;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}
th{background:#eee}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0}figure img{max-width:100%}figcaption{font-size:90%;color:#555}
summary{cursor:pointer;font-weight:bold}"""


def render_html_blocks(doc):
    out, e = [], html.escape
    for kind, *a in doc.blocks:
        if kind == "h":
            out.append(f"<h{a[0]}>{e(a[1])}</h{a[0]}>")
        elif kind == "p":
            out.append(f"<p>{e(a[0])}</p>")
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{e(item)}</li>" for item in a[0]) + "</ul>")
        elif kind == "table":
            head = "".join(f"<th>{e(c)}</th>" for c in a[0])
            body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>\n" for row in a[1])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>")
        elif kind == "figure":
            data = base64.b64encode(a[1]).decode("ascii")
            out.append(f'<figure><img alt="{e(a[2])}" src="data:image/png;base64,{data}">'
                       f"<figcaption>{e(a[2])}</figcaption></figure>")
        elif kind == "details":
            out.append(f"<details><summary>{e(a[0])}</summary>\n{render_html_blocks(a[1])}\n</details>")
    return "\n".join(out)


def render_html(doc, title):
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}'
            f"</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n{render_html_blocks(doc)}\n</body>\n</html>\n")


# --- Figures ---------------------------------------------------------------------------------

def setup_matplotlib():
    """pyplot on the Agg backend, set up so that the same input draws the same bytes."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("missing-dependency", "python3-matplotlib is not installed; run scripts/install-deps")
    matplotlib.rcParams.update({"svg.hashsalt": "scoville", "figure.dpi": 100, "font.size": 9,
                                "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 7})
    return plt


def png(plt, fig):
    """The figure as PNG bytes, without the Software chunk (a version) that would make output differ."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def style(index):
    """Colour and marker of series `index`, the same in every figure."""
    return COLORS[index % len(COLORS)], "osD^v<>ph*"[index % 10]


def legend_right(ax, reverse=False):
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # stacked bars read top-down, so their legend is reversed to match
        order = slice(None, None, -1) if reverse else slice(None)
        ax.legend(handles[order], labels[order], loc="upper left", bbox_to_anchor=(1.0, 1.0))


def lines_vs_concurrency(ctx, ax, value_of, ylabel):
    """One line per series of value_of(point index) against concurrency, on a log2 axis ticked at
    the concurrencies run; points without a concurrency or a value are left out."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    seen = set()
    for n, (label, members) in enumerate(zip(ctx.labels, ctx.members)):
        xy = [(number(ctx.points[i].get("concurrency")), value_of(i)) for i in members]
        xy = sorted((x, y) for x, y in xy if x is not None and x > 0 and y is not None)
        if xy:
            color, marker = style(n)
            ax.plot([x for x, _ in xy], [y for _, y in xy], color=color, marker=marker, label=label)
            seen.update(x for x, _ in xy)
    ax.set_ylabel(ylabel)
    if not seen:
        ax.text(0.5, 0.5, "no data", ha="center", transform=ax.transAxes)
        return False
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(seen)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("concurrency")
    ax.set_ylim(bottom=0)
    return True


def stacked_bars(ax, labels, categories, matrix, ylabel, title):
    """One bar per label, one stacked segment per category (matrix[label][category])."""
    bottoms = [0.0] * len(labels)
    for c, category in enumerate(categories):
        heights = [row[c] for row in matrix]
        ax.bar(range(len(labels)), heights, bottom=bottoms, color=COLORS[c % len(COLORS)],
               label=category.replace("_", " "))
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([textwrap.fill(label, 22) for label in labels], fontsize=8)
    ax.set(ylabel=ylabel, title=title, ylim=(0, 1.05 * max(bottoms + [1e-12])))
    ax.grid(axis="x", visible=False)
    legend_right(ax, reverse=True)


# --- Sections --------------------------------------------------------------------------------

class Context:
    """What every section needs: the inputs, and per series its points and chosen point."""

    def __init__(self, results, reports, plt):
        self.results, self.reports, self.plt = results, reports, plt
        self.points = results["points"]
        self.series = [s for s in seq(results.get("series")) if isinstance(s, dict)]
        self.labels = [str(s.get("label", f"series {n}")) for n, s in enumerate(self.series)]
        self.comparison = obj(results.get("comparison"))
        self.iso = number(self.comparison.get("iso_interactivity_tok_per_s_per_user"))
        self.members = [[i for i in seq(s.get("points")) if isinstance(i, int) and 0 <= i < len(self.points)]
                        for s in self.series]
        self.series_of = {i: n for n in reversed(range(len(self.members))) for i in self.members[n]}
        # Each series is shown in detail at its highest tok/s per kW rated; max() keeps the first of equals.
        self.chosen = [max(rows, key=lambda i: number(get(self.points[i], "throughput_per_kw_rated_tok_per_s",
                                                          "total")) or -1.0) if rows else None
                       for rows in self.members]

    def at(self, index):
        """'concurrency 16 (point c16)'."""
        p = self.points[index]
        load = "batch" if p.get("kind") == "decode_step" else "concurrency"  # a decode step's concurrency is its batch
        value = "" if p.get("concurrency") is None else f" {p['concurrency']}"
        return f"{load}{value or ' unknown'} (point {p.get('id')})"

    def chosen_with(self, *path):
        """(label, point index) of each series whose chosen point's report has `path`."""
        return [(label, i) for label, i in zip(self.labels, self.chosen)
                if i is not None and get(self.reports[i], *path)]


def section_overview(doc, ctx, title):
    """Title and what was run."""
    r = ctx.results

    def distinct(key):
        return ", ".join(sorted({str(p[key]) for p in ctx.points if p.get(key) is not None})) or MISSING

    missing = [m for m in seq(r.get("missing")) if isinstance(m, dict)]
    generator = obj(r.get("generator"))
    items = [f"Models: {distinct('model')}", f"Scenarios: {distinct('scenario')}",
             f"Platforms: {distinct('platform')}", f"Kinds: {distinct('kind')}",
             f"Points: {len(ctx.points)} with results, {len(missing)} missing",
             f"Throughput basis: {r.get('throughput_basis', MISSING)}",
             f"Generator: {generator.get('name', 'scoville')} {generator.get('version', MISSING)}"]
    if ctx.comparison:
        items.append(f"Baseline: {ctx.comparison.get('baseline')}; iso-interactivity target: {fmt(ctx.iso)} tok/s/user")
    # How the points were simulated (docs/serving.md: replica classes, sampled decode steps).
    modes = [(get(rep, "results", "simulation", "mode"), obj(get(rep, "results", "decode_steps"))) for rep in ctx.reports]
    classes = sum(1 for mode, _ in modes if mode == "replica_classes")
    sampled = [d for _, d in modes if d.get("mode") == "sampled"]
    if classes or sampled:
        bound = max((number(get(d, "error_bound_95", "busy_time")) or 0.0 for d in sampled), default=0.0)
        items.append(f"Simulation: replica classes on {plural(classes, 'point')}; decode steps sampled on "
                     f"{plural(len(sampled), 'point')} (largest 95% bound on a point's step time error: "
                     f"{fmt(bound, 100)}%)")
    doc.add("h", 1, title)
    doc.add("h", 2, "What was run")
    doc.add("list", items)
    if missing:
        doc.add("p", "Missing points:")
        doc.add("list", [f"{m.get('id')}: {m.get('reason', 'no reason given')}" for m in missing])


def sustained_by_window(points):
    """{window_s: (max_w, point)}: per sustained-power window with a value, the worst of `points`."""
    worst = {}
    for p in points:
        for w in seq(get(p, "power", "sustained_w_per_chip")):
            window, max_w = number(get(w, "window_s")), number(get(w, "max_w"))
            if window is not None and max_w is not None and (window not in worst or max_w > worst[window][0]):
                worst[window] = (max_w, p)
    return worst


# --- Published claims ------------------------------------------------------------------------

CLAIM_METRICS = {
    "min_itl_s": "minimum inter-token latency (median ITL at the lowest concurrency)",
    "e2e_s": "end-to-end latency (median, lowest concurrency)",
    "e2e_ratio": "end-to-end latency, {subject} / {comparison}",
    "interactivity_lowest": "tok/s/user at the lowest concurrency",
    "peak_per_kw_ratio": "peak throughput per kW rated, {subject} / {comparison}",
    "per_kw_at_iso": "throughput per kW rated at {iso} tok/s/user",
    "per_kw_at_iso_ratio": "throughput per kW rated at {iso} tok/s/user, {subject} / {comparison}",
    "interactive_per_kw_ratio": "throughput per kW rated at equal interactivity, {iso} tok/s/user and up "
                                "(both frontiers), {subject} / {comparison}",
    "max_sustained_w": "sustained power per chip ({window} windows, worst point)",
}


def load_claims(paths):
    """The claims files, each checked: {name, source, model, subject, comparison, claims: [...]}."""
    try:
        import yaml
    except ImportError:
        raise InputError("missing-dependency", "--claims needs Debian's python3-yaml (scripts/install-deps)")
    files = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        except OSError as e:
            raise InputError("missing-file", f"{path}: cannot read the claims file: {e.strerror}")
        except yaml.YAMLError as e:
            raise InputError("malformed-yaml", f"{path}: not valid YAML: {e}")
        if not isinstance(data, dict):
            raise InputError("invalid-config", f"{path}: expected a map with model, subject, comparison, claims")
        for key in ("model", "subject", "comparison", "claims"):
            if key not in data:
                raise InputError("missing-key", f"{path}: key '{key}' is missing")
        for n, claim in enumerate(seq(data["claims"])):
            where = f"{path}: claims[{n}]"
            if not isinstance(claim, dict) or claim.get("metric") not in CLAIM_METRICS:
                raise InputError("invalid-config", f"{where}: metric must be one of {', '.join(CLAIM_METRICS)}")
            bounds = [k for k in ("published", "at_most", "at_least") if k in claim]
            if len(bounds) != 1:
                raise InputError("invalid-config", f"{where}: give exactly one of published, at_most, at_least")
            if claim.get("series", "subject") not in ("subject", "comparison"):
                raise InputError("invalid-config", f"{where}: series must be subject or comparison")
        data["path"] = path
        files.append(data)
    return files


def frontier_at(ctx, series, x):
    """Throughput per kW rated interpolated along the series' per-kW frontier at interactivity x, or None."""
    pts = sorted((number(get(ctx.points[i], "interactivity_tok_per_s_per_user")),
                  number(get(ctx.points[i], "throughput_per_kw_rated_tok_per_s", "total")))
                 for i in seq(series.get("frontier_per_kw")) if isinstance(i, int) and 0 <= i < len(ctx.points))
    pts = [(a, b) for a, b in pts if a is not None and b is not None]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return pts[0][1] if len(pts) == 1 and pts[0][0] == x else None


def claim_value(ctx, series, other, claim):
    """(simulated value, how it was taken) of one claim; value None with the reason when it cannot be."""
    metric = claim["metric"]
    members = [ctx.points[i] for i in seq(series.get("points")) if isinstance(i, int) and 0 <= i < len(ctx.points)]
    lowest = min(members, key=lambda p: number(p.get("concurrency")) or math.inf, default=None)
    iso = ctx.iso or 169.0
    if metric == "min_itl_s":
        return min_of(get(p, "itl_s", "median") for p in members), f"concurrency {lowest.get('concurrency')}"
    if metric == "e2e_s":
        return number(get(lowest, "e2el_s", "median")), f"concurrency {lowest.get('concurrency')}"
    if metric == "interactivity_lowest":
        return number(get(lowest, "interactivity_tok_per_s_per_user")), f"concurrency {lowest.get('concurrency')}"
    if metric == "e2e_ratio":
        mine, _ = claim_value(ctx, series, other, {"metric": "e2e_s"})
        theirs, _ = claim_value(ctx, other, series, {"metric": "e2e_s"})
        return (mine / theirs if mine and theirs else None), "lowest concurrency of each"
    if metric == "peak_per_kw_ratio":
        a, b = (number(s.get("peak_throughput_per_kw_rated_tok_per_s")) for s in (series, other))
        return (a / b if a and b else None), "each frontier's highest"
    if metric == "per_kw_at_iso":
        return frontier_at(ctx, series, iso), f"{fmt(iso)} tok/s/user on its frontier"
    if metric == "per_kw_at_iso_ratio":
        a, b = frontier_at(ctx, series, iso), frontier_at(ctx, other, iso)
        return (a / b if a and b else None), f"{fmt(iso)} tok/s/user on both frontiers"
    if metric == "interactive_per_kw_ratio":
        top = min((max((number(get(ctx.points[i], "interactivity_tok_per_s_per_user")) or 0.0)
                       for i in seq(s.get("frontier_per_kw")) if isinstance(i, int) and 0 <= i < len(ctx.points))
                   for s in (series, other)), default=0.0)
        if top <= iso:
            return None, f"the frontiers do not both reach past {fmt(iso)} tok/s/user"
        ratios = []
        for k in range(21):  # geometric steps from the iso target to the highest common interactivity
            x = iso * (top / iso) ** (k / 20)
            a, b = frontier_at(ctx, series, x), frontier_at(ctx, other, x)
            if a and b:
                ratios.append(a / b)
        if not ratios:
            return None, "no common interactivity"
        return (min(ratios), max(ratios)), f"{fmt(iso)} to {fmt(top)} tok/s/user"
    if metric == "max_sustained_w":
        window = number(claim.get("window_s", 1.0))
        worst = sustained_by_window(members).get(window)
        if worst is None:
            return None, f"no point has a {duration(window)} window"
        return worst[0], f"concurrency {worst[1].get('concurrency')}"
    return None, "unknown metric"


def claim_rows(ctx, claims_files):
    """One row per claim: [model, claim, published, simulated, error or verdict, where]."""
    rows = []
    for cf in claims_files:
        found = {}
        for role in ("subject", "comparison"):
            match = [s for s in ctx.series if s.get("platform") == cf[role] and s.get("model") == cf["model"]]
            found[role] = match[0] if match else None
        for claim in seq(cf["claims"]):
            role = claim.get("series", "subject")
            series, other = found[role], found["comparison" if role == "subject" else "subject"]
            name = CLAIM_METRICS[claim["metric"]].format(subject=cf["subject"], comparison=cf["comparison"],
                                                         iso=fmt(ctx.iso or 169.0),
                                                         window=duration(number(claim.get("window_s", 1.0))))
            if claim["metric"] in ("min_itl_s", "e2e_s", "interactivity_lowest", "per_kw_at_iso", "max_sustained_w"):
                name = f"{cf[role]}: {name}"
            metric = claim["metric"]
            units = {"max_sustained_w": " W", "per_kw_at_iso": " tok/s/kW", "interactivity_lowest": " tok/s/user"}

            def show(v, metric=metric, units=units):
                if metric in ("min_itl_s", "e2e_s"):
                    return duration(v)
                return fmt(v, suffix="×") if "ratio" in metric else fmt(v, suffix=units.get(metric, ""))
            if series is None or other is None:
                missing = cf[role] if series is None else cf["comparison" if role == "subject" else "subject"]
                value, where = None, f"no series of {missing} running {cf['model']}"
            else:
                value, where = claim_value(ctx, series, other, claim)
            if "published" in claim:
                published = claim["published"]
                shown = (" to ".join(show(v) for v in published) if isinstance(published, list) else show(published))
            else:
                bound = claim.get("at_most", claim.get("at_least"))
                shown = ("at most " if "at_most" in claim else "more than ") + show(bound)
            if value is None:
                rows.append([cf["model"], name, shown, MISSING, "n/a", where])
                continue
            if isinstance(value, tuple):
                simulated = f"{show(value[0])} to {show(value[1])}"
                lo, hi = claim["published"]
                inside = value[0] >= lo and value[1] <= hi
                overlap = value[1] >= lo and value[0] <= hi
                verdict = "within the range" if inside else ("overlaps the range" if overlap else "outside the range")
            else:
                simulated = show(value)
                if isinstance(claim.get("published"), list):
                    lo, hi = claim["published"]
                    verdict = "within the range" if lo <= value <= hi else "outside the range"
                elif "published" in claim:
                    verdict = f"{(value / claim['published'] - 1) * 100:+.1f}%"
                elif "at_most" in claim:
                    verdict = "met" if value <= claim["at_most"] else "MISSED"
                else:
                    verdict = "met" if value > claim["at_least"] else f"MISSED by {(1 - value / claim['at_least']) * 100:.1f}%"
            rows.append([cf["model"], name, shown, simulated, verdict, where])
    return rows


CLAIMS_HEADER = ["Model", "Claim", "Published", "Simulated", "Error / verdict", "Simulated at"]


def section_claims(doc, ctx, claims_files):
    """The first table: every published claim beside what this run simulated."""
    doc.add("h", 2, "Published claims against the simulation")
    doc.add("table", CLAIMS_HEADER, claim_rows(ctx, claims_files))
    sources = "; ".join(f"{cf['path']} ({cf.get('source', 'no source given')})" for cf in claims_files)
    doc.add("p", f"Claims from {sources}. Errors are simulated / published - 1. Latencies are medians at each "
            "series' lowest concurrency; ratios of throughput per kW rated interpolate along the Pareto frontiers "
            "(docs/validation.md#the-main-job).")


def print_claims(ctx, claims_files):
    rows = [CLAIMS_HEADER] + claim_rows(ctx, claims_files)
    widths = [max(len(str(r[c])) for r in rows) for c in range(len(CLAIMS_HEADER))]
    widths[1] = min(widths[1], 96)
    for r in rows:
        print("  ".join(str(c)[:widths[i]].ljust(widths[i]) for i, c in enumerate(r)).rstrip())


def section_platform_table(doc, ctx):
    """One row per series: peaks, values and ratios at the iso interactivity, best latencies, power."""
    doc.add("h", 2, "Platforms side by side")
    if not ctx.series:
        doc.add("p", "No series: nothing to compare.")
        return
    ratios = {str(r.get("series")): r for r in seq(ctx.comparison.get("ratios")) if isinstance(r, dict)}
    iso = fmt(ctx.iso)
    baseline = ctx.labels.index(ctx.comparison.get("baseline")) if ctx.comparison.get("baseline") in ctx.labels else 0
    baseline_note = get(ctx.series[baseline], "at_iso_interactivity", "note")
    # Short runs lack the long windows: one window that every series has keeps the column comparable.
    windows = [set(sustained_by_window(ctx.points[i] for i in members)) for members in ctx.members]
    common_window = max(set.intersection(*windows), default=None)
    header = ["Series", "Chips", "Peak tok/s/chip", "Peak tok/s/kW rated", f"tok/s/chip @ {iso} tok/s/user",
              f"tok/s/kW rated @ {iso} tok/s/user", "Peak/chip vs baseline", "Peak/kW vs baseline",
              f"@ {iso}: /chip vs baseline", f"@ {iso}: /kW vs baseline", "Best median TTFT (ms)",
              "Best median ITL (ms)", "Best median TPOT (ms)", "Best median E2E (s)", "Max sustained W/chip vs rated"]
    rows = []
    for s, label, members in zip(ctx.series, ctx.labels, ctx.members):
        pts = [ctx.points[i] for i in members]
        at = obj(s.get("at_iso_interactivity"))
        ratio = ratios.get(label, {})
        na = f"n/a ({at['note']})" if at.get("note") else "n/a"
        na_ratio = na if at.get("note") or not baseline_note else f"n/a (baseline: {baseline_note})"
        cells = [fmt(at.get(k)) if number(at.get(k)) is not None else na
                 for k in ("throughput_per_chip_tok_per_s", "throughput_per_kw_rated_tok_per_s")]
        cells += [fmt(ratio.get(k), suffix="×") if number(ratio.get(k)) is not None else na_ratio
                  for k in ("peak_throughput_per_chip_ratio", "peak_throughput_per_kw_rated_ratio",
                            "at_iso_interactivity_per_chip_ratio", "at_iso_interactivity_per_kw_rated_ratio")]
        cells += [fmt(min_of(get(p, key, "median") for p in pts), scale)
                  for key, scale in (("ttft_s", 1e3), ("itl_s", 1e3), ("tpot_s", 1e3), ("e2el_s", 1))]
        sustained, power = sustained_by_window(pts), MISSING
        if sustained:
            window = common_window if common_window in sustained else max(sustained)
            max_w, p = sustained[window]
            rated = number(get(p, "power", "rated_w_per_chip"))
            share = f" ({fmt(max_w / rated, 100)}%)" if rated else ""
            power = f"{fmt(max_w)} W of {fmt(rated)} W{share}, {duration(window)} window"
        chips = ", ".join(sorted({str(p.get("chips")) for p in pts})) or MISSING
        rows.append([label, chips, fmt(s.get("peak_throughput_per_chip_tok_per_s")),
                     fmt(s.get("peak_throughput_per_kw_rated_tok_per_s"))] + cells + [power])
    doc.add("table", header, rows)
    doc.add("p", f"Ratios are against the baseline series {ctx.comparison.get('baseline', MISSING)}. Values at the "
            "iso interactivity are interpolated along each series' Pareto frontier (n/a where the frontier does not "
            "reach the target). Sustained power: the worst point of the series in the largest window that every series "
            "has a value for (else its own largest).")


def section_pareto(doc, ctx):
    """Interactivity vs throughput per chip and per kW: every point, the frontier, the iso target."""
    from matplotlib.ticker import EngFormatter
    doc.add("h", 2, "Pareto frontiers")
    fig, axes = ctx.plt.subplots(1, 2, figsize=(12, 4.8))

    def xy(indices, key):
        pairs = [(number(get(ctx.points[i], "interactivity_tok_per_s_per_user")),
                  number(get(ctx.points[i], key, "total")))
                 for i in indices if isinstance(i, int) and 0 <= i < len(ctx.points)]
        pairs = [(x, y) for x, y in pairs if x is not None and x > 0 and y is not None]
        return [x for x, _ in pairs], [y for _, y in pairs]

    for ax, key, frontier, ylabel in (
            (axes[0], "throughput_per_chip_tok_per_s", "frontier_per_chip", "per chip"),
            (axes[1], "throughput_per_kw_rated_tok_per_s", "frontier_per_kw", "per kW rated")):
        for n, (s, label, members) in enumerate(zip(ctx.series, ctx.labels, ctx.members)):
            color, marker = style(n)
            ax.scatter(*xy(members, key), color=color, marker=marker, alpha=0.6, label=label)
            ax.plot(*xy(seq(s.get(frontier)), key), color=color, linewidth=1.5)
        if ctx.iso:
            ax.axvline(ctx.iso, color="k", linestyle="--", linewidth=1, label=f"target {fmt(ctx.iso)} tok/s/user")
        ax.set(xlabel="interactivity (tok/s/user)", ylabel=f"total throughput {ylabel} (tok/s)")
        ax.set_ylim(bottom=0)
    # The target counts towards the span: on a linear axis, a target far from the points squeezes them.
    xs = xy(range(len(ctx.points)), "throughput_per_chip_tok_per_s")[0] + ([ctx.iso] if ctx.iso else [])
    for ax in axes:
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
        if xs and max(xs) > 10 * min(xs):
            ax.set_xscale("log")
    legend_right(axes[1])
    fig.tight_layout()
    doc.figure("pareto", png(ctx.plt, fig), "Interactivity vs total throughput per chip (left) and per kW rated "
               "(right); markers are all points, lines the Pareto frontiers, dashed the iso-interactivity target.")


def section_latency(doc, ctx):
    """Median TTFT, ITL and E2E latency against concurrency, one line per series."""
    doc.add("h", 2, "Latency vs concurrency")
    fig, axes = ctx.plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (key, ylabel, scale) in zip(axes, (("ttft_s", "median TTFT (ms)", 1e3), ("itl_s", "median ITL (ms)", 1e3),
                                               ("e2el_s", "median E2E latency (s)", 1.0))):
        lines_vs_concurrency(ctx, ax, lambda i: scaled(get(ctx.points[i], key, "median"), scale), ylabel)
    legend_right(axes[2])
    fig.tight_layout()
    doc.figure("latency", png(ctx.plt, fig), "Median time to first token, inter-token latency and end-to-end "
               "latency against concurrency (log2 axis).")


def chip_timeline(report):
    """(interval_s, per-chip watts): the mean over the chips the timeline lists, else platform / chips."""
    timeline = obj(get(report, "power", "timeline"))
    chips = [v for _, v in sorted(obj(timeline.get("chips_w")).items()) if isinstance(v, list) and v]
    if chips:
        watts = [sum(number(c[k]) or 0.0 for c in chips) / len(chips) for k in range(min(map(len, chips)))]
    else:
        count = number(get(report, "power", "platform", "chips")) or len(seq(get(report, "power", "chips"))) or 1
        watts = [(number(w) or 0.0) / count for w in seq(timeline.get("platform_w"))]
    return number(timeline.get("interval_s")) or 1.0, watts


def sustained_sentence(label, where, report):
    """Worst sustained window of any chip against its limit, and the violations summed over chips."""
    chips = [c for c in seq(get(report, "power", "chips")) if isinstance(c, dict)]
    if get(report, "power", "modelled") is False or not chips:
        return f"{label} at {where}: no power model."
    windows = [w for c in chips for w in seq(c.get("sustained")) if isinstance(w, dict)]
    violations = sum(int(number(w.get("violations")) or 0) for w in windows)
    measured = [(number(w.get("max_w")) / number(w.get("limit_w")), w) for w in windows
                if number(w.get("max_w")) is not None and number(w.get("limit_w"))]
    if not measured:
        return f"{label} at {where}: the run is shorter than every sustained-power window."
    share, w = max(measured, key=lambda m: m[0])
    return (f"{label} at {where}: the worst sustained window is {duration(number(w.get('window_s')) or 0)} at "
            f"{fmt(w['max_w'])} W per chip, {fmt(share, 100)}% of the {fmt(w['limit_w'])} W limit; "
            f"{plural(violations, 'violation')} (summed over {plural(len(chips), 'chip')} and all windows).")


def chip_thermal(report):
    """The first chip's thermal section (docs/thermal.md), or None."""
    chips = [c for c in seq(get(report, "power", "chips")) if isinstance(c, dict)]
    thermal = obj(chips[0].get("thermal")) if chips else {}
    return thermal or None


def thermal_sentence(label, where, thermal):
    """Chip 0's temperatures against its limits, where it would settle, and what its cooling holds."""
    die, hbm, settle = obj(thermal.get("die_c")), obj(thermal.get("hbm_c")), obj(thermal.get("steady_state_at_average"))
    settles = ("would run away (no steady state)" if settle.get("runaway") else
               f"would settle at {fmt(settle.get('die_c'))} C (die) and {fmt(settle.get('hbm_c'))} C (HBM)")
    return (f"{label} at {where}, {thermal.get('cooling')} cooling ({fmt(thermal.get('ambient_c'))} C inlet): die "
            f"peak {fmt(die.get('peak'))} C of its {fmt(thermal.get('junction_limit_c'))} C limit, HBM peak "
            f"{fmt(hbm.get('peak'))} C; throttled {duration(number(thermal.get('time_throttled_s')) or 0)}, HBM at "
            f"double-rate refresh {duration(number(thermal.get('time_hbm_refresh_doubled_s')) or 0)}; at this "
            f"average power the chip {settles}; its cooling holds {fmt(thermal.get('sustainable_w'))} W at the "
            f"junction limit (the {thermal.get('binding_limit')} binds).")


def section_power(doc, ctx):
    """Per series, the per-chip power timeline of the point with the highest tok/s per kW rated."""
    from matplotlib.ticker import EngFormatter
    doc.add("h", 2, "Power at the most efficient point")
    shown = [(n, label, i) for n, (label, i) in enumerate(zip(ctx.labels, ctx.chosen))
             if i is not None and chip_timeline(ctx.reports[i])[1]]
    if shown:
        fig, axes = ctx.plt.subplots(len(shown), 1, figsize=(11, 2.8 * len(shown)), squeeze=False)
        for ax, (n, label, i) in zip(axes[:, 0], shown):
            interval, watts = chip_timeline(ctx.reports[i])
            color = style(n)[0]
            ax.plot([k * interval for k in range(len(watts))], watts, color=color, linewidth=0.8,
                    label=f"mean chip power ({duration(interval)} bins)")
            rated = number(get(ctx.points[i], "power", "rated_w_per_chip"))
            if rated:
                ax.axhline(rated, color="red", linewidth=1.5, label=f"rated {fmt(rated)} W")
            windows = [w for w in seq(get(ctx.points[i], "power", "sustained_w_per_chip"))
                       if isinstance(w, dict) and number(w.get("max_w")) is not None]
            for k, w in enumerate(windows):
                ax.axhline(w["max_w"], color="0.3", linewidth=0.9, linestyle=["--", ":", "-.", (0, (5, 5))][k % 4],
                           label=f"max over {duration(number(w.get('window_s')) or 0)}: {fmt(w['max_w'])} W")
            window = obj(get(ctx.reports[i], "results", "window"))
            if number(window.get("start_s")) is not None and number(window.get("end_s")) is not None:
                ax.axvspan(window["start_s"], window["end_s"], color=color, alpha=0.08, label="measurement window")
            ax.set(title=f"{label}: {ctx.at(i)}", ylabel="W per chip")
            ax.xaxis.set_major_formatter(EngFormatter(unit="s", sep=""))  # runs last from microseconds to minutes
            ax.set_ylim(bottom=0)
            thermal = chip_thermal(ctx.reports[i])
            if thermal:
                hot = ax.twinx()
                timeline = obj(thermal.get("timeline"))
                times = [number(t) or 0.0 for t in seq(timeline.get("time_s"))]
                for key, dash, what in (("die_c", "-", "die"), ("hbm_c", "--", "HBM")):
                    temps = [number(t) or 0.0 for t in seq(timeline.get(key))]
                    hot.plot(times[:len(temps)], temps, color="darkorange", linestyle=dash, linewidth=1.0,
                             label=f"{what} temperature (C)")
                limit = number(thermal.get("junction_limit_c"))
                if limit:
                    hot.axhline(limit, color="darkorange", linewidth=0.8, linestyle=":",
                                label=f"junction limit {fmt(limit)} C")
                hot.set_ylabel("C (chip 0)")
                lines, labels = ax.get_legend_handles_labels()
                more, more_labels = hot.get_legend_handles_labels()
                ax.legend(lines + more, labels + more_labels, loc="upper left", bbox_to_anchor=(1.08, 1.0),
                          fontsize=8)
            else:
                legend_right(ax)
        axes[-1, 0].set_xlabel("simulated time")
        fig.tight_layout()
        doc.figure("power", png(ctx.plt, fig), "Per-chip power over the whole run (warm-up included) at each "
                   "series' most efficient point, against the chip rating and the sustained maxima per window.")
    sentences = [sustained_sentence(label, ctx.at(i), ctx.reports[i])
                 for label, i in zip(ctx.labels, ctx.chosen) if i is not None]
    sentences += [thermal_sentence(label, ctx.at(i), chip_thermal(ctx.reports[i]))
                  for label, i in zip(ctx.labels, ctx.chosen) if i is not None and chip_thermal(ctx.reports[i])]
    doc.add("list", sentences or ["No series has a power timeline."])


def phase_energy(ctx, chosen):
    """(phases, rows, unit): energy by phase for the chosen points.

    Serving runs give energy by phase inside the measurement window together with its output
    tokens, so J per output token compares platforms directly; unless every bar has that, the
    chips' whole-run phase energy is shown as shares instead."""
    tokens = [number(get(ctx.reports[i], "results", "metrics", "tokens_in_window", "output")) for _, i in chosen]
    per_token = all(tokens) and all(get(ctx.reports[i], "power", "serving", "energy_by_phase_j") for _, i in chosen)
    # One dict per bar, or one per chip to add up.
    sources = [[obj(get(ctx.reports[i], "power", "serving", "energy_by_phase_j"))] if per_token else
               [obj(get(chip, "by_phase_j")) for chip in seq(get(ctx.reports[i], "power", "chips"))]
               for _, i in chosen]
    phases = list(dict.fromkeys(k for chips in sources for chip in chips for k in chip))
    rows = []
    for chips, count in zip(sources, tokens):
        values = [sum(number(chip.get(k)) or 0.0 for chip in chips) for k in phases]
        rows.append([v / ((count if per_token else sum(values) / 100.0) or 1.0) for v in values])
    return phases, rows, ("J per output token (measurement window)" if per_token else "% of chip energy (whole run)")


def level_energy(ctx, chosen):
    """(levels, rows, unit): each chosen point's energy by level, per output token in the serving
    window when every point has it, else in % of the platform's energy over the whole run."""
    per_token = [obj(get(ctx.reports[i], "power", "serving", "energy_per_output_token_by_level_j")) for _, i in chosen]
    if all(per_token):
        sources, unit = per_token, "J per output token (measurement window)"
    else:
        sources, unit = [obj(get(ctx.reports[i], "power", "platform", "by_level_j")) for _, i in chosen], None
    levels = [k for k in LEVELS if any(number(b.get(k)) for b in sources)]
    rows = []
    for b in sources:
        values = [number(b.get(k)) or 0.0 for k in levels]
        rows.append(values if unit else [100.0 * v / (sum(values) or 1.0) for v in values])
    return levels, rows, unit or "% of platform energy (whole run)"


def section_energy(doc, ctx):
    """Energy by level (along a byte's path from HBM to the datapath, the clocked floor and static
    power) and by phase at each series' chosen point, as stacked bars and tables."""
    doc.add("h", 2, "Energy breakdown")
    chosen = ctx.chosen_with("power", "platform", "by_level_j")
    if not chosen:
        doc.add("p", "No series has an energy breakdown.")
        return
    levels, level_rows, level_unit = level_energy(ctx, chosen)
    phases, phase_rows, unit = phase_energy(ctx, chosen)
    labels, where = [label for label, _ in chosen], [ctx.at(i) for _, i in chosen]
    names = [LEVEL_NAMES.get(k, k) for k in levels]
    fig, axes = ctx.plt.subplots(1, 2, figsize=(12, 4.2))
    stacked_bars(axes[0], labels, names, level_rows, level_unit, "by level")
    stacked_bars(axes[1], labels, phases, phase_rows, unit, "by phase")
    fig.tight_layout()
    doc.figure("energy", png(ctx.plt, fig), f"Energy at each series' most efficient point: by level in {level_unit} "
               f"(left: HBM core, PHY and controller, L2, on-chip network, SRAM, register file, datapath, the clocked "
               f"floor and static power), by phase in {unit} (right).")
    per_token = level_unit.startswith("J")
    doc.add("p", f"By level, in {level_unit}:")
    doc.add("table", ["Series", "Point"] + ["total"] * per_token + names,
            [[l, w] + [fmt(sum(row))] * per_token + [fmt(v) for v in row]
             for l, w, row in zip(labels, where, level_rows)])
    doc.add("p", f"By phase, in {unit}:")
    total = unit.startswith("J")  # shares add up to 100 %
    doc.add("table", ["Series", "Point"] + ["total"] * total + [p.replace("_", " ") for p in phases],
            [[l, w] + [fmt(sum(row))] * total + [fmt(v) for v in row] for l, w, row in zip(labels, where, phase_rows)])


def section_phase_time(doc, ctx):
    """Prefill-only, decode-only, mixed and idle replica time at each series' chosen point."""
    doc.add("h", 2, "Time by phase")
    chosen = ctx.chosen_with("results", "replicas")
    if not chosen:
        doc.add("p", "No series has per-replica times (decode-step runs have none).")
        return
    rows = [[sum(number(get(r, key)) or 0.0 for r in seq(get(ctx.reports[i], "results", "replicas")))
             for key, _ in REPLICA_TIMES] for _, i in chosen]
    fig, ax = ctx.plt.subplots(figsize=(8, 4))
    stacked_bars(ax, [label for label, _ in chosen], [name for _, name in REPLICA_TIMES], rows,
                 "replica time (s, summed over replicas)", "")
    fig.tight_layout()
    doc.figure("phase-time", png(ctx.plt, fig), "Replica time by kind of step at each series' most efficient point "
               "(whole run, summed over replicas).")
    doc.add("table", ["Series", "Point"] + [f"{name} (s)" for _, name in REPLICA_TIMES],
            [[label, ctx.at(i)] + [fmt(v) for v in row] for (label, i), row in zip(chosen, rows)])


PHASES = ("prefill", "decode")


def policy_text(report, phase):
    policy = obj(get(report, "results", "serving_policy", f"{phase}_policy"))
    if not policy:
        return MISSING
    extras = [f"{k} {v}" for k, v in policy.items() if k != "impl"]
    return str(policy.get("impl", MISSING)) + (f" ({', '.join(extras)})" if extras else "")


def section_phases(doc, ctx):
    """Per phase at each series' chosen point (policy, units, clocks, fraction of peak, power, energy per
    token, transitions), and each series against the baseline at equal concurrency."""
    doc.add("h", 2, "Phases and policies")
    chosen = ctx.chosen_with("results", "phases")
    if not chosen:
        doc.add("p", "No series has per-phase results (decode-step runs have none).")
        return
    rows = []
    for label, i in chosen:
        phases = obj(get(ctx.reports[i], "results", "phases"))
        for phase in PHASES:
            q = obj(phases.get(phase))
            rows.append([label, ctx.at(i), phase, policy_text(ctx.reports[i], phase), str(q.get("steps", MISSING)),
                         fmt(q.get("mean_active_arrays")), fmt(q.get("mean_core_clock_hz"), 1e-9),
                         fmt(q.get("fraction_of_peak_flops"), 100.0), fmt(q.get("fraction_of_peak_hbm_bandwidth"), 100.0),
                         fmt(q.get("average_power_per_chip_w")), fmt(q.get("energy_per_token_j"), 1e3),
                         str(q.get("transitions", MISSING)), fmt(q.get("transition_time_s"), 1e3)])
    doc.add("p", "Each series at its most efficient point: the steps of each phase under its policy (a step that "
                 "feeds prompt tokens is a prefill step), time-weighted active tensor arrays and core clock, "
                 "achieved FLOP/s and HBM bandwidth against the nominal peak, power per chip, energy per token fed, "
                 "and the changes of setting made for the phase with their stall.")
    doc.add("table", ["Series", "Point", "Phase", "Policy", "Steps", "Active arrays", "Core clock (GHz)",
                      "FLOP/s (% peak)", "HBM BW (% peak)", "W/chip", "mJ/token", "Transitions", "Stall (ms)"], rows)
    baseline = ctx.labels.index(ctx.comparison.get("baseline")) if ctx.comparison.get("baseline") in ctx.labels else 0
    if len(ctx.series) < 2:
        return
    by_concurrency = {ctx.points[i].get("concurrency"): i for i in ctx.members[baseline]}
    deltas = []
    for n, members in enumerate(ctx.members):
        if n == baseline:
            continue
        for i in members:
            b = by_concurrency.get(ctx.points[i].get("concurrency"))
            if b is None:
                continue

            def change(value_of):
                a, v = value_of(b), value_of(i)
                return MISSING if a is None or v is None or a == 0 else f"{100.0 * (v - a) / a:+.1f}%"

            def decode_w(k):
                return number(get(ctx.reports[k], "results", "phases", "decode", "average_power_per_chip_w"))

            deltas.append([ctx.labels[n], ctx.at(i),
                           change(lambda k: number(get(ctx.points[k], "itl_s", "median"))),
                           change(lambda k: number(get(ctx.points[k], "ttft_s", "median"))),
                           change(lambda k: number(get(ctx.points[k], "e2el_s", "median"))),
                           change(lambda k: number(get(ctx.points[k], "power", "average_w_per_chip"))),
                           change(decode_w),
                           change(lambda k: number(get(ctx.points[k], "power", "energy_per_output_token_j")))])
    if deltas:
        doc.add("p", f"Against the baseline series {ctx.labels[baseline]} at the same concurrency (a policy "
                     "comparison when the series differ in their serving policies):")
        doc.add("table", ["Series", "Point", "Median ITL", "Median TTFT", "Median E2E", "Avg W/chip",
                          "Decode W/chip", "J/output token"], deltas)


def peak_kv_fraction(report):
    values = [number(get(r, "kv_cache", "peak_fraction")) for r in seq(get(report, "results", "replicas"))]
    values = [v for v in values if v is not None]
    return max(values) if values else None


def section_kv(doc, ctx):
    """Peak KV-cache occupancy (max over replicas) against concurrency."""
    doc.add("h", 2, "KV-cache occupancy")
    fig, ax = ctx.plt.subplots(figsize=(8, 4))
    if not lines_vs_concurrency(ctx, ax, lambda i: scaled(peak_kv_fraction(ctx.reports[i]), 100.0),
                                "peak KV-cache occupancy (% of capacity)"):
        ctx.plt.close(fig)
        doc.add("p", "No point reports KV-cache occupancy (decode-step runs have none).")
        return
    legend_right(ax)
    fig.tight_layout()
    doc.figure("kv", png(ctx.plt, fig), "Peak KV-cache blocks in use as a share of capacity (max over replicas) "
               "against concurrency.")


def section_points(doc, ctx):
    """Every point with its coordinates and headline metrics, collapsed."""
    doc.add("h", 2, "All points")
    on_chip = {i for s in ctx.series for i in seq(s.get("frontier_per_chip")) if isinstance(i, int)}
    on_kw = {i for s in ctx.series for i in seq(s.get("frontier_per_kw")) if isinstance(i, int)}
    header = ["Id", "Series", "Coordinates", "Concurrency", "Interactivity (tok/s/user)", "tok/s/chip (total)",
              "tok/s/kW rated (total)", "Median TTFT (ms)", "Median TPOT (ms)", "Median ITL (ms)", "Median E2E (s)",
              "Avg W/chip", "J/output token", "Peak KV (%)", "On frontier"]
    rows = []
    for i, (p, report) in enumerate(zip(ctx.points, ctx.reports)):
        coordinates = p.get("coordinates") if isinstance(p.get("coordinates"), dict) else {}
        frontier = ", ".join(name for name, members in (("chip", on_chip), ("kW", on_kw)) if i in members)
        rows.append([str(p.get("id")), ctx.labels[ctx.series_of[i]] if i in ctx.series_of else MISSING,
                     "; ".join(f"{k}={v}" for k, v in sorted(coordinates.items())) or MISSING,
                     MISSING if p.get("concurrency") is None else str(p["concurrency"]),
                     fmt(p.get("interactivity_tok_per_s_per_user")),
                     fmt(get(p, "throughput_per_chip_tok_per_s", "total")),
                     fmt(get(p, "throughput_per_kw_rated_tok_per_s", "total"))] +
                    [fmt(get(p, key, "median"), 1e3) for key in ("ttft_s", "tpot_s", "itl_s")] +
                    [fmt(get(p, "e2el_s", "median")), fmt(get(p, "power", "average_w_per_chip")),
                     fmt(get(p, "power", "energy_per_output_token_j")), fmt(peak_kv_fraction(report), 100),
                     frontier or MISSING])
    inner = Doc()
    inner.add("table", header, rows)
    doc.details(f"{plural(len(rows), 'point')} (click to expand)", inner)


# --- Output and entry point ------------------------------------------------------------------

def write_outputs(doc, out_dir, title):
    """index.html, report.md and figures/*.png; an earlier report's figures are removed first."""
    figures_dir = os.path.join(out_dir, "figures")
    try:
        os.makedirs(figures_dir, exist_ok=True)
        for name in sorted(os.listdir(figures_dir)):
            if name.endswith(".png"):
                os.remove(os.path.join(figures_dir, name))
        for name, data in doc.figures:
            with open(os.path.join(figures_dir, name), "wb") as f:
                f.write(data)
        for name, text in (("report.md", render_markdown(doc)), ("index.html", render_html(doc, title))):
            with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
    except OSError as e:
        raise InputError("output-not-writable", f"{e.filename or out_dir}: {e.strerror}")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"error[usage]: {message} (see --help)\n")  # one line, as the C++ side reports
        sys.exit(2)


def main(argv):
    parser = Parser(description="Render a design-review report (index.html, report.md, figures/) from results.json.")
    parser.add_argument("results", metavar="RESULTS_JSON", help="results.json of `scoville merge` or `scoville sweep`")
    parser.add_argument("--out", required=True, metavar="DIR", help="report directory (created if needed)")
    parser.add_argument("--title", default="Scoville design review", help="the report's title")
    parser.add_argument("--claims", action="append", default=[], metavar="FILE.yaml",
                        help="published claims to set beside the simulation (repeatable)")
    args = parser.parse_args(argv)
    try:
        plt = setup_matplotlib()
        results = load_results(args.results)
        ctx = Context(results, load_point_reports(results, os.path.dirname(os.path.abspath(args.results))), plt)
        claims = load_claims(args.claims)
        doc = Doc()
        section_overview(doc, ctx, args.title)
        if claims:
            section_claims(doc, ctx, claims)
        section_platform_table(doc, ctx)
        if ctx.points:
            for section in (section_pareto, section_latency, section_power, section_energy, section_phase_time,
                            section_phases, section_kv, section_points):
                section(doc, ctx)
        write_outputs(doc, args.out, args.title)
        if claims:
            print_claims(ctx, claims)
    except InputError as e:
        sys.stderr.write(f"error[{e.kind}]: {e}\n")
        return 2
    except Exception as e:  # noqa: BLE001 - anything else is a bug here, not bad input
        traceback.print_exc()
        sys.stderr.write(f"error[internal]: {args.results}: {type(e).__name__}: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
