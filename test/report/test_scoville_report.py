"""Tests of scripts/scoville_report.py on a small synthetic sweep (no simulator needed), and of the
report in a real browser: headless Chromium (Debian's `chromium`, which scripts/test installs; the
test is skipped, saying so, where it is absent).

Run with: /usr/bin/python3 -m unittest discover -s test/report
"""

import json
from html.parser import HTMLParser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "scoville_report.py")
# Debian's interpreter has python3-matplotlib; a pyenv `python3` on PATH may not.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class TagBalance(HTMLParser):
    """Checks that every non-void element is closed in order, as a browser's parser needs."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack = []
        self.errors = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()


def html_loads(text):
    """A whole document whose tags balance: <!DOCTYPE html>, <html> ... </html>."""
    parser = TagBalance()
    parser.feed(text)
    parser.close()
    return text.lstrip().lower().startswith("<!doctype html>") and not parser.errors and not parser.stack


def html_unescape(text):
    import html
    return html.unescape(text)


def latency(median):
    return {"mean": median, "median": median, "p90": median * 1.2, "p99": median * 1.5}


def point(index, platform, concurrency, interactivity, per_chip, per_kw):
    """One row of results.json, as `scoville merge` writes it."""
    return {
        "id": f"{platform}-c{concurrency}", "source": f"points/{platform}-c{concurrency}/report.json",
        "coordinates": {"concurrency": str(concurrency)}, "platform": platform, "model": "tiny-dense",
        "scenario": "inferencex-1k1k", "kind": "serving", "overrides": [], "seed": 1, "chips": 1,
        "concurrency": concurrency, "interactivity_tok_per_s_per_user": interactivity,
        "ttft_s": latency(0.01 * (index + 1)), "tpot_s": latency(0.002), "itl_s": latency(0.002),
        "e2el_s": latency(0.15 * (index + 1)),
        "throughput_tok_per_s": {"input": per_chip * 0.9, "output": per_chip * 0.1, "total": per_chip},
        "throughput_per_chip_tok_per_s": {"input": per_chip * 0.9, "output": per_chip * 0.1, "total": per_chip},
        "throughput_per_kw_rated_tok_per_s": {"input": per_kw * 0.9, "output": per_kw * 0.1, "total": per_kw},
        "throughput_per_kw_average_tok_per_s": {"output": per_kw * 0.3, "total": per_kw * 3},
        "power": {"rated_w_per_chip": 700.0, "average_w_per_chip": 250.0,
                  "sustained_w_per_chip": [{"window_s": 0.001, "max_w": 400.0}, {"window_s": 0.01, "max_w": 300.0},
                                           {"window_s": 1.0, "max_w": None}],
                  "energy_per_output_token_j": 0.05},
    }


def phases(decode_w):
    def phase(steps, arrays, watts):
        return {"steps": steps, "mean_active_arrays": arrays, "mean_core_clock_hz": 1.8e9,
                "fraction_of_peak_flops": 0.5, "fraction_of_peak_hbm_bandwidth": 0.6,
                "average_power_per_chip_w": watts, "energy_per_token_j": 0.002, "transitions": 3,
                "transition_time_s": 2e-6}
    return {"prefill": phase(4, 32.0, 390.0), "decode": phase(100, 25.5, decode_w),
            "transition": {"chip_time_s": 6e-6, "energy_j": 0.001}, "idle": {"chip_time_s": 0.0, "energy_j": 0.0}}


def report(concurrency, platform="alpha"):
    """The parts of a point's report.json that the renderer reads."""
    sustained = [{"window_s": w, "max_w": m, "max_at_s": 0.1, "limit_w": 700.0,
                  "headroom_w": None if m is None else 700.0 - m, "violations": 0, "first_violations": []}
                 for w, m in ((0.001, 400.0), (0.01, 300.0), (1.0, None))]
    levels = {"datapath": 9.0, "register_file": 1.0, "vector_unit": 1.0, "sram": 0.5, "llc": 0.0, "noc": 2.0,
              "memory_interface": 8.0, "hbm": 10.0, "fabric_ports": 0.0, "floor": 5.0, "wake": 0.0, "static": 30.0,
              "switches": 0.0}
    return {
        "schema_version": 3,
        "results": {
            "kind": "serving", "load": {"concurrency": concurrency}, "window": {"start_s": 0.1, "end_s": 0.4},
            "metrics": {"tokens_in_window": {"input": 8000, "output": 500}},
            "replicas": [{"replica": 0, "prefill_only_time_s": 0.05, "decode_only_time_s": 0.2, "mixed_time_s": 0.1,
                          "idle_time_s": 0.05, "busy_time_s": 0.35,
                          "kv_cache": {"capacity_blocks": 1000, "peak_blocks": 10 * concurrency,
                                       "peak_fraction": 0.01 * concurrency}}],
            "serving_policy": {"prefill_policy": {"impl": "compute_opt"},
                               "decode_policy": {"impl": "bandwidth_opt", "compute_headroom": 0.8}},
            "phases": phases(200.0 if platform == "alpha" else 180.0),
        },
        "power": {
            "modelled": True,
            "platform": {"chips": 1, "rated_w": 700.0, "average_w": 250.0, "sustained": sustained,
                         "by_level_j": levels},
            "chips": [{"chip": "chip0", "mirror_of": None, "rated_w": 700.0, "idle_w": 100.0, "average_w": 250.0,
                       "sustained": sustained, "by_level_j": levels,
                       "by_phase_j": {"prefill": 5.0, "decode": 20.0, "communication": 0.5, "static_busy": 30.0,
                                      "idle": 6.0}}],
            "timeline": {"interval_s": 0.01, "platform_w": [200.0 + 10 * (k % 7) for k in range(50)],
                         "chips_w": {"chip0": [200.0 + 10 * (k % 7) for k in range(50)]}},
            "serving": {"energy_j": 40.0, "energy_by_phase_j": {"prefill": 4.0, "decode": 16.0, "communication": 0.4,
                                                                "static_and_switches": 19.6},
                        "energy_per_output_token_by_level_j": {k: v / 500.0 for k, v in levels.items()}},
        },
    }


def results():
    """Two series (two platforms), two points each; only the first series reaches the iso target."""
    points = [point(0, "alpha", 1, 300.0, 1000.0, 1500.0), point(1, "alpha", 8, 100.0, 5000.0, 7000.0),
              point(0, "beta", 1, 60.0, 2000.0, 2500.0), point(1, "beta", 8, 40.0, 9000.0, 11000.0)]
    series = []
    for n, platform in enumerate(("alpha", "beta")):
        rows = [2 * n, 2 * n + 1]
        series.append({
            "label": platform, "platform": platform, "model": "tiny-dense", "scenario": "inferencex-1k1k",
            "coordinates": {}, "points": rows, "frontier_per_chip": rows, "frontier_per_kw": rows,
            "peak_throughput_per_chip_tok_per_s": points[rows[1]]["throughput_per_chip_tok_per_s"]["total"],
            "peak_throughput_per_kw_rated_tok_per_s": points[rows[1]]["throughput_per_kw_rated_tok_per_s"]["total"],
            "at_iso_interactivity": {"interactivity_tok_per_s_per_user": 200.0,
                                     "throughput_per_chip_tok_per_s": 3000.0 if n == 0 else None,
                                     "throughput_per_kw_rated_tok_per_s": 4250.0 if n == 0 else None,
                                     **({} if n == 0 else {"note": "the frontier spans 40 to 60 tok/s/user"})},
        })
    return {
        "schema_version": 1, "generator": {"name": "scoville", "version": "0.1.0"},
        "throughput_basis": "total tokens (input + output) per second",
        "points": points, "series": series,
        "comparison": {"baseline": "alpha", "iso_interactivity_tok_per_s_per_user": 200.0, "ratios": [
            {"series": "alpha", "peak_throughput_per_chip_ratio": 1.0, "peak_throughput_per_kw_rated_ratio": 1.0,
             "at_iso_interactivity_per_chip_ratio": 1.0, "at_iso_interactivity_per_kw_rated_ratio": 1.0},
            {"series": "beta", "peak_throughput_per_chip_ratio": 1.8, "peak_throughput_per_kw_rated_ratio": 1.5714,
             "at_iso_interactivity_per_chip_ratio": None, "at_iso_interactivity_per_kw_rated_ratio": None}]},
        "missing": [{"id": "beta-c64", "reason": "no report (not run yet, or the run failed: see its run.log)"}],
    }


class ScovilleReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="scoville-report-test-")
        self.results = os.path.join(self.dir, "results.json")
        self.write(self.results, results())
        for p in results()["points"]:
            self.write(os.path.join(self.dir, p["source"]), report(p["concurrency"], p["platform"]))

    def tearDown(self):
        shutil.rmtree(self.dir)

    @staticmethod
    def write(path, data):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(data, f)

    def render(self, out, results_path=None, extra=()):
        return subprocess.run([PYTHON, SCRIPT, results_path or self.results, "--out", out, "--title", "Test",
                                *extra], capture_output=True, text=True, timeout=120)

    def claims_file(self, claims):
        path = os.path.join(self.dir, "claims.yaml")
        with open(path, "w") as f:
            f.write("name: test\nsource: a test\nmodel: tiny-dense\nsubject: alpha\ncomparison: beta\nclaims:\n")
            for claim in claims:
                f.write(f"- {claim}\n")
        return path

    @staticmethod
    def read(path, mode="r"):
        with open(path, mode) as f:
            return f.read()

    def test_renders_a_self_contained_deterministic_report(self):
        out = os.path.join(self.dir, "report")
        run = self.render(out)
        self.assertEqual(run.returncode, 0, run.stderr)
        html = self.read(os.path.join(out, "index.html"))
        markdown = self.read(os.path.join(out, "report.md"))
        self.assertIn("data:image/png;base64,", html)
        for reference in ("http://", "https://", 'src="figures'):
            self.assertNotIn(reference, html)
        figures = re.findall(r"\]\((figures/[^)]+\.png)\)", markdown)
        self.assertGreaterEqual(len(figures), 5)
        for figure in figures:
            data = self.read(os.path.join(out, figure), "rb")
            self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), figure)
            self.assertGreater(len(data), 5000, f"{figure}: an empty plot")
        self.assertTrue(html_loads(html))
        for text in (html, markdown):
            self.assertIn("alpha", text)
            self.assertIn("beta", text)
            self.assertIn("1.80×", text)  # beta's peak-per-chip ratio
            self.assertIn("1.57×", text)  # beta's peak-per-kW ratio
            self.assertIn("n/a (the frontier spans 40 to 60 tok/s/user)", text)
            self.assertIn("beta-c64", text)  # the missing point, with its reason
            self.assertIn("Phases and policies", text)
            self.assertRegex(text, r"bandwidth\\?_opt \(compute\\?_headroom 0.8\)")  # markdown escapes _
            self.assertIn("-10.0%", text)  # beta's decode W/chip against alpha's at the same concurrency
            # Energy per output token by level: the PHY and controller's 8 J over 500 tokens.
            self.assertIn("J per output token (measurement window)", text)
            self.assertIn("PHY/controller", text)
            self.assertIn("0.016", text)

        again = os.path.join(self.dir, "again")
        self.assertEqual(self.render(again).returncode, 0)
        for name in ["index.html", "report.md"] + figures:
            self.assertEqual(self.read(os.path.join(out, name), "rb"), self.read(os.path.join(again, name), "rb"),
                             name)

    def test_a_thermal_section_adds_temperatures_to_the_power_figure_and_a_sentence(self):
        thermal = {"cooling": "air", "kind": "air", "ambient_c": 35.0, "junction_limit_c": 105.0,
                   "hbm_refresh_limit_c": 85.0, "start": "idle", "time_constants_s": [60.0, 0.3, 0.15, 0.02],
                   "die_c": {"start": 45.0, "peak": 71.5, "mean": 65.0, "end": 70.0},
                   "hbm_c": {"start": 50.0, "peak": 86.0, "mean": 80.0, "end": 85.5},
                   "leakage_scale_end": 1.4, "time_throttled_s": 0.25, "time_hbm_refresh_doubled_s": 1.5,
                   "steady_state_at_average": {"average_w": 500.0, "hbm_w": 80.0, "runaway": False, "die_c": 74.0,
                                               "hbm_c": 88.0, "total_w": 520.0, "over_junction_limit": False},
                   "sustainable_w": 1050.0, "binding_limit": "rating", "headroom_under_rating_w": 200.0,
                   "timeline": {"time_s": [0.01 * k for k in range(50)], "die_c": [45.0 + 0.5 * k for k in range(50)],
                                "hbm_c": [50.0 + 0.7 * k for k in range(50)]}}
        plain = os.path.join(self.dir, "plain")
        self.assertEqual(self.render(plain).returncode, 0)
        for p in results()["points"]:
            data = report(p["concurrency"], p["platform"])
            data["power"]["chips"][0]["thermal"] = thermal
            self.write(os.path.join(self.dir, p["source"]), data)
        out = os.path.join(self.dir, "report")
        run = self.render(out)
        self.assertEqual(run.returncode, 0, run.stderr)
        markdown = self.read(os.path.join(out, "report.md"))
        self.assertIn("air cooling (35.0 C inlet): die peak 71.5 C of its 105 C limit, HBM peak 86.0 C", markdown)
        self.assertIn("throttled 250 ms, HBM at double-rate refresh 1.5 s", markdown)
        self.assertIn("would settle at 74.0 C (die) and 88.0 C (HBM)", markdown)
        self.assertIn("holds 1,050 W at the junction limit (the rating binds)", markdown)
        self.assertNotIn("die peak", self.read(os.path.join(plain, "report.md")))
        # The power figure gains the temperature axis: it differs from the plain report's.
        figure = next(f for f in re.findall(r"\]\((figures/[^)]+\.png)\)", markdown) if "power" in f)
        self.assertNotEqual(self.read(os.path.join(out, figure), "rb"), self.read(os.path.join(plain, figure), "rb"))

    def test_claims_open_the_report_beside_the_simulated_values(self):
        claims = self.claims_file([
            "{metric: min_itl_s, series: subject, published: 0.0025}",  # 2 ms simulated: -20.0%
            "{metric: e2e_ratio, published: [0.5, 2.0]}",  # 0.15 s / 0.15 s = 1
            "{metric: peak_per_kw_ratio, published: 0.5}",  # 7,000 / 11,000 = 0.636: +27.3%
            "{metric: per_kw_at_iso, series: subject, published: 4000}",  # 4,250 at 200 tok/s/user: +6.2%
            "{metric: interactivity_lowest, series: subject, at_least: 200}",  # 300: met
            "{metric: max_sustained_w, series: subject, window_s: 0.01, at_most: 250}",  # 300 W: missed
            "{metric: interactive_per_kw_ratio, published: [2.1, 4.1]}",  # beta never reaches 200: n/a
        ])
        # One point was simulated with replica classes and sampled decode steps: the overview says so.
        path = os.path.join(self.dir, "points", "alpha-c1", "report.json")
        point = json.loads(self.read(path))
        point["results"]["simulation"] = {"mode": "replica_classes"}
        point["results"]["decode_steps"] = {"mode": "sampled", "error_bound_95": {"busy_time": 0.0005}}
        self.write(path, point)
        out = os.path.join(self.dir, "report")
        run = self.render(out, extra=("--claims", claims))
        self.assertEqual(run.returncode, 0, run.stderr)
        markdown = self.read(os.path.join(out, "report.md"))
        self.assertIn("Simulation: replica classes on 1 point; decode steps sampled on 1 point (largest 95% bound on "
                      "a point's step time error: 0.0500%)", markdown)
        headings = re.findall(r"^## (.+)$", markdown, re.M)
        self.assertEqual(headings[:3], ["What was run", "Published claims against the simulation",
                                        "Platforms side by side"])
        for text in (markdown, run.stdout):
            for expected in ("-20.0%", "within the range", "+27.3%", "+6.2%", "met", "MISSED",
                             "the frontiers do not both reach past 200 tok/s/user"):
                self.assertIn(expected, text)
        self.assertIn("300 W", run.stdout)
        self.assertTrue(html_loads(self.read(os.path.join(out, "index.html"))))

    def test_a_bad_claims_file_is_bad_input_naming_the_file_and_the_claim(self):
        out = os.path.join(self.dir, "report")
        claims = self.claims_file(["{metric: fastest_ever, published: 1}"])
        run = self.render(out, extra=("--claims", claims))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertRegex(run.stderr, r"^error\[invalid-config\]: ")
        self.assertIn(f"{claims}: claims[0]: metric must be one of", run.stderr)
        claims = self.claims_file(["{metric: e2e_s, published: 1, at_most: 2}"])
        run = self.render(out, extra=("--claims", claims))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("give exactly one of published, at_most, at_least", run.stderr)
        run = self.render(out, extra=("--claims", os.path.join(self.dir, "nope.yaml")))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("nope.yaml: cannot read the claims file", run.stderr)

    def test_the_report_renders_in_headless_chromium(self):
        """index.html in a real browser: no console errors, every image decoded, every table with rows."""
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is None:
            self.skipTest("headless Chromium is not installed (Debian's `chromium`: scripts/install-deps "
                          "--with-browser, which scripts/test runs): the report was not opened in a browser")
        out = os.path.join(self.dir, "report")
        run = self.render(out, extra=("--claims", self.claims_file(["{metric: peak_per_kw_ratio, published: 0.5}"])))
        self.assertEqual(run.returncode, 0, run.stderr)
        # A page beside the report loads it in a frame and writes what it finds into its own DOM, which
        # --dump-dom prints once the frame has loaded (file pages may read each other with
        # --allow-file-access-from-files).
        probe = os.path.join(out, "probe.html")
        with open(probe, "w") as f:
            f.write("""<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="report" src="index.html" style="width:1200px;height:900px"></iframe>
<script>
document.getElementById("report").addEventListener("load", () => {
  const doc = document.getElementById("report").contentDocument;
  const images = Array.from(doc.images);
  const result = {
    images: images.length,
    broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
    tables: doc.querySelectorAll("table").length,
    emptyTables: Array.from(doc.querySelectorAll("table")).filter(
        t => t.tBodies.length === 0 || t.tBodies[0].rows.length === 0 || t.getBoundingClientRect().height === 0).length,
    firstTable: doc.querySelector("table") ? doc.querySelector("table").rows[0].cells[1].textContent : "",
    headings: Array.from(doc.querySelectorAll("h2")).map(h => h.textContent),
  };
  document.getElementById("result").textContent = "RESULT " + JSON.stringify(result);
});
</script></body></html>""")
        profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=self.dir)
        run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              f"--user-data-dir={profile}", "--allow-file-access-from-files",
                              "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
                              "--dump-dom", "file://" + probe], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        found = re.search(r"RESULT (\{.*?\})</pre>", run.stdout, re.S)
        self.assertIsNotNone(found, run.stdout[-2000:] + run.stderr[-2000:])
        result = json.loads(html_unescape(found.group(1)))
        self.assertGreaterEqual(result["images"], 5)
        self.assertEqual(result["broken"], [])
        self.assertGreaterEqual(result["tables"], 3)
        self.assertEqual(result["emptyTables"], 0)
        self.assertEqual(result["firstTable"], "Claim")
        self.assertEqual(result["headings"][:2], ["What was run", "Published claims against the simulation"])
        # The browser's log (--enable-logging) names no level for console messages; the report has no
        # script and the probe logs nothing, so any console message (an error, an uncaught exception, a
        # resource that failed to load) is one too many.
        console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
        self.assertEqual(console, [], run.stderr[-2000:])

    def test_wrong_schema_version_is_bad_input(self):
        data = results()
        data["schema_version"] = 2
        self.write(self.results, data)
        run = self.render(os.path.join(self.dir, "report"))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertRegex(run.stderr, r"^error\[[a-z-]+\]: ")
        self.assertIn(self.results, run.stderr)

    def test_missing_point_report_names_the_point(self):
        os.remove(os.path.join(self.dir, "points", "beta-c8", "report.json"))
        run = self.render(os.path.join(self.dir, "report"))
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("beta-c8", run.stderr)
        self.assertIn(os.path.join("points", "beta-c8", "report.json"), run.stderr)
        self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)


if __name__ == "__main__":
    unittest.main()
