#!/usr/bin/env python3
"""Writes docs/agents.md from the runs scripts/experiment-agents made.

Every number and every sentence that states a finding comes from the points' report.json files;
run the experiment script, not this file, to regenerate the document.
"""

import argparse
import glob
import json
import math
import os

PLATFORMS = [("jalapeno-8", "reference chip (jalapeno-8, `reference-jalapeno`)"),
             ("gb300-nvl72", "GB300 NVL72 (`trtllm-gb200`)")]
REPLICA_CHIPS = 8  # tp 8 on both sides


def overrides(report):
    out = {}
    for item in report["inputs"]["overrides"]:
        key, _, value = item.partition("=")
        out[key] = value
    return out


def load(directory):
    """Every report under directory/*/points/*/report.json, keyed by its run folder name."""
    runs = []
    for path in sorted(glob.glob(os.path.join(directory, "*", "points", "*", "report.json"))):
        with open(path) as f:
            report = json.load(f)
        runs.append((os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(path)))), report))
    return runs


def row(report):
    results = report["results"]
    metrics = results["metrics"]
    serving = report["power"].get("serving", {})
    sets = overrides(report)
    chips = metrics["chips"]
    replicas = chips // REPLICA_CHIPS
    pc = results.get("prefix_cache", {})
    by_turn = {t["turn"]: t for t in metrics.get("ttft_by_turn_s", [])}
    last_turn = max(by_turn) if by_turn else None
    local = pc.get("tiers", {}).get("local_hbm", {})
    host = pc.get("tiers", {}).get("host", {})
    kv = results["replicas"][0]["kv_cache"]
    return {
        "platform": report["inputs"]["platform"]["name"],
        "users": results["load"]["concurrency"] // replicas,
        "caching": sets.get("scenario.serving.prefix_caching") == "true",
        "offload": sets.get("scenario.serving.prefix_cache_offload", "none"),
        "placement": results["kv_placement"]["policy"],
        "requests": metrics["requests"],
        "rated_w": metrics["rated_power_w"] / chips,
        "intvty": metrics["interactivity_tok_per_s_per_user"],
        "tpot_ms": 1e3 * metrics["tpot_s"]["median"],
        "tpot_mean_ms": 1e3 * metrics["tpot_s"]["mean"],
        "ttft_s": metrics["ttft_s"]["median"],
        "ttft_first_s": by_turn[1]["median"] if by_turn else None,
        "ttft_last_s": by_turn[last_turn]["median"] if by_turn else None,
        "last_turn": last_turn,
        "last_turn_tokens": by_turn[last_turn]["mean_input_tokens"] if by_turn else None,
        "e2el_s": metrics["e2el_s"]["median"],
        "e2el_mean_s": metrics["e2el_s"]["mean"],
        "prefilled_m": sum(rep["prefill_tokens"] for rep in results["replicas"]) / 1e6,
        "out_per_chip": metrics["throughput_per_chip_tok_per_s"]["output"],
        "avg_w": serving.get("average_power_per_chip_w"),
        # The chip's own: the average less its share of the switches.
        "chip_w": (serving["average_power_per_chip_w"] -
                   serving["energy_by_level_j"]["switches"] / serving["window_s"]["duration"] / chips
                   if serving.get("average_power_per_chip_w") else None),
        "out_per_kw": (serving.get("throughput_per_kw_average_tok_per_s") or {}).get("output"),
        "out_per_kw_rated": (serving.get("throughput_per_kw_rated_tok_per_s") or {}).get("output"),
        "hit_rate": pc.get("hit_rate"),
        "evicted": pc.get("evicted_blocks"),
        "offloaded": pc.get("offloaded_blocks"),
        "restored": pc.get("restored_blocks"),
        "host_link_tb": pc["host_link_kv_bytes"] / 1e12 if pc else kv["host_kv_bytes"] / 1e12,
        "copy_s": results["kv_swap"]["time_s"],
        "preemptions": results["preemptions"],
        "kv_capacity_tokens": results["kv_cache_capacity_tokens_per_replica"],
        "peak_local": kv["peak_fraction"],
        "mean_local": local.get("mean_used_fraction"),
        "peak_host_blocks": host.get("peak_used_blocks", kv["peak_host_blocks"]),
        "host_blocks": kv["host_capacity_blocks"],
        "local_blocks": kv["capacity_blocks"],
        "host_kv_tb": kv["host_kv_bytes"] / 1e12,
    }


def fmt(value, spec, none="n/a"):
    return none if value is None else format(value, spec)


def frontier(series):
    """The series' Pareto frontier: points no other point beats on both tok/s/user and output tok/s
    per kW, by interactivity."""
    points = [r for r in series if r["out_per_kw"]]
    return sorted((r for r in points
                   if not any(o["intvty"] >= r["intvty"] and o["out_per_kw"] >= r["out_per_kw"] and o is not r
                              and (o["intvty"] > r["intvty"] or o["out_per_kw"] > r["out_per_kw"]) for o in points)),
                  key=lambda r: r["intvty"])


def at_interactivity(series, level):
    """Output tok/s per kW at `level` tok/s/user along a series' Pareto frontier (log-log between
    neighbouring points); None outside the frontier's range."""
    points = [(r["intvty"], r["out_per_kw"]) for r in frontier(series)]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= level <= x1 and x0 > 0 and x1 > x0:
            t = (math.log(level) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--users", type=int, nargs="+", required=True)
    args = parser.parse_args()

    runs = load(args.out)
    pareto = [row(r) for name, r in runs if name.startswith("pareto-")]
    spill = {(row(r)["users"], row(r)["placement"]): row(r) for name, r in runs if name.startswith("spill-u")}
    quick = args.turns != 38
    most = max(args.users)

    lines = []
    add = lines.append
    add("# Agents: long-context, multi-turn serving on the reference chip")
    add("")
    add("<!-- Generated by scripts/experiment-agents (scripts/agents_doc.py); do not edit by hand. -->")
    add("")
    if quick:
        add(f"**Smoke run (`--quick`): {args.turns}-turn conversations and {len(args.users)} loads; "
            "the full experiment runs 38 turns. Do not quote these numbers.**")
        add("")
    add("The seeds name agentic, long-context, multi-turn work as the reference chip's untested case. "
        "This experiment serves it: DeepSeek R1 (MXFP4) on the `agent-loop` scenario "
        "(`workloads/scenarios/agent-loop.yaml`):")
    add("")
    add("- every conversation opens with the same 12,288-token system prompt and tool definitions;")
    add(f"- {args.turns} turns of up to 2,560 tokens in (tool output and instructions, drawn from 80-100%) "
        "and up to 512 out, each turn's prompt holding the whole conversation so far "
        f"(about {fmt(max((r['last_turn_tokens'] or 0) for r in pareto) / 1000, '.0f')}k tokens at its last turn);")
    add("- 2 s of tool calls (think time) between a turn's last token and the next turn;")
    add(f"- every user runs one whole conversation ({args.turns} measured requests per user).")
    add("")
    add("Both sides run replicas of tp 8: the reference chip's `jalapeno-8` (one replica, "
        "`reference-jalapeno`) and GB300 NVL72 (nine replicas, `trtllm-gb200`, the nearest calibrated "
        "profile), each at the same users per replica, with and without prefix caching "
        "(`serving.prefix_caching`, docs/serving.md#prefix-caching). Throughput per kW is output tokens "
        "per second over the average simulated power of the chips and their switches in the measurement "
        "window (`W per chip` is that power per chip; hosts are not in it); prompt tokens are left out because, with the "
        "cache, most of them are never computed.")
    add("")
    wall = 0
    for path in glob.glob(os.path.join(args.out, "*", "wall_s")):
        with open(path) as f:
            wall += int(f.read().strip())
    add(f"Regenerate with `scripts/experiment-agents` (its sweeps' wall times, {args.jobs} runs at once "
        f"each, sum to {wall // 60} min {wall % 60} s on this 2-core machine).")
    add("")

    # 1. The Pareto table.
    add("## Interactivity against throughput per kW")
    add("")
    add("| platform | prefix caching | users per replica | tok/s/user | TTFT median (s) | TTFT turn 1 / "
        "last (s) | E2E median (s) | output tok/s per chip | W per chip | output tok/s per kW | hit rate | "
        "evicted blocks | preemptions | KV peak of HBM |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for platform, _ in PLATFORMS:
        for caching in (False, True):
            for r in sorted((r for r in pareto if r["platform"] == platform and r["caching"] == caching),
                            key=lambda r: r["users"]):
                add(f"| {platform} | {'on' if caching else 'off'} | {r['users']} | {r['intvty']:.1f} | "
                    f"{r['ttft_s']:.3f} | {fmt(r['ttft_first_s'], '.3f')} / {fmt(r['ttft_last_s'], '.3f')} | "
                    f"{r['e2el_s']:.2f} | {r['out_per_chip']:.1f} | {fmt(r['avg_w'], '.0f')} | "
                    f"{fmt(r['out_per_kw'], '.1f')} | {fmt(r['hit_rate'], '.3f', '-')} | "
                    f"{fmt(r['evicted'], 'd', '-')} | {r['preemptions']} | {100 * r['peak_local']:.0f}% |")
    add("")

    # 2. Equal interactivity.
    series = {(p, c): [r for r in pareto if r["platform"] == p and r["caching"] == c]
              for p, _ in PLATFORMS for c in (False, True)}
    levels = [5, 7.5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200]
    add("## At equal interactivity")
    add("")
    add("Output tokens per second per kW, interpolated along each series' Pareto frontier (log-log "
        "between neighbouring loads; a load beaten on both axes by another is not on it) at the "
        "interactivity levels both frontiers span:")
    add("")
    add("| tok/s/user | prefix caching | reference chip | GB300 NVL72 | reference / GB300 |")
    add("|---|---|---|---|---|")
    ratios = {}
    for caching in (False, True):
        for level in levels:
            a = at_interactivity(series[("jalapeno-8", caching)], level)
            b = at_interactivity(series[("gb300-nvl72", caching)], level)
            if a is None or b is None:
                continue
            ratios.setdefault(caching, []).append((level, a / b))
            add(f"| {level} | {'on' if caching else 'off'} | {a:.1f} | {b:.1f} | {a / b:.2f}x |")
    if not ratios:
        add("| - | - | - | - | the two platforms' interactivity ranges do not overlap |")
    add("")
    gains = []
    for platform, label in PLATFORMS:
        for level in levels:
            off = at_interactivity(series[(platform, False)], level)
            on = at_interactivity(series[(platform, True)], level)
            if off and on:
                gains.append((platform, label, level, on / off))
    for caching in (False, True):
        if caching in ratios:
            values = [v for _, v in ratios[caching]]
            add(f"- With prefix caching {'on' if caching else 'off'}, the reference chip gives "
                f"{min(values):.2f}x to {max(values):.2f}x GB300's output tokens per kW at "
                f"{ratios[caching][0][0]} to {ratios[caching][-1][0]} tok/s/user.")
    for platform, label in PLATFORMS:
        own = [(level, g) for p, _, level, g in gains if p == platform]
        if own:
            add(f"- Prefix caching multiplies the {label}'s output tokens per kW by "
                f"{min(g for _, g in own):.2f}x to {max(g for _, g in own):.2f}x at equal interactivity "
                f"({own[0][0]} to {own[-1][0]} tok/s/user).")
    for (platform, caching), rows_ in sorted(series.items()):
        front = frontier(rows_)
        beaten = [r for r in sorted(rows_, key=lambda r: r["users"]) if r not in front]
        for r in beaten:
            add(f"- {platform} with prefix caching {'on' if caching else 'off'} at {r['users']} users per "
                f"replica is off the frontier: {r['intvty']:.1f} tok/s/user and {r['out_per_kw']:.1f} output "
                f"tok/s per kW, fewer of both than with fewer users"
                + (f" (its cache evicted {r['evicted']} blocks, the hit rate fell to {r['hit_rate']:.3f} and "
                   f"HBM peaked at {100 * r['peak_local']:.0f}%)." if r["evicted"] else "."))
    for platform, label in PLATFORMS:
        over = [r for r in pareto if r["platform"] == platform and r["chip_w"] and r["chip_w"] > r["rated_w"]]
        if over:
            worst = max(over, key=lambda r: r["chip_w"])
            add(f"- The {label}'s average chip power (its share of the switches left out) exceeds its "
                f"{worst['rated_w']:.0f} W rating at {len(over)} of its loads (up to {worst['chip_w']:.0f} W, {worst['users']} users per replica, "
                f"prefix caching {'on' if worst['caching'] else 'off'}): the platform runs no power governor "
                "(`platform.power.governor`), so those points would run slower on silicon that enforces "
                "the rating.")
    for platform, label in PLATFORMS:
        on = sorted(series[(platform, True)], key=lambda r: r["users"])
        off = sorted(series[(platform, False)], key=lambda r: r["users"])
        if on and off and on[0]["ttft_last_s"] and off[0]["ttft_last_s"]:
            add(f"- Time to first token of the last turn ({on[0]['last_turn_tokens'] / 1000:.0f}k tokens of "
                f"context) at {on[0]['users']} users per replica on the {label}: "
                f"{off[0]['ttft_last_s']:.2f} s without the cache, {on[0]['ttft_last_s']:.2f} s with it "
                f"(the first turn: {off[0]['ttft_first_s']:.2f} s and {on[0]['ttft_first_s']:.2f} s).")
    add("")

    # 3. KV beyond HBM.
    add("## When the conversations' KV exceeds HBM")
    add("")
    spill_users = sorted({u for u, _ in spill})
    drops = {r["users"]: r for r in pareto if r["platform"] == "jalapeno-8" and r["caching"]}
    if spill_users and most in drops:
        r0 = drops[most]
        conversations_tokens = most * (r0["last_turn_tokens"] or 0)
        add(f"The reference chip keeps KV local: a replica's eight chips hold "
            f"{r0['kv_capacity_tokens'] / 1e6:.2f} M tokens of DeepSeek R1's KV after the weights "
            f"({r0['local_blocks']} blocks of {r0['kv_capacity_tokens'] // r0['local_blocks']} tokens). {most} users whose conversations reach "
            f"{(r0['last_turn_tokens'] or 0) / 1000:.0f}k tokens hold up to "
            f"{conversations_tokens / 1e6:.1f} M tokens, {conversations_tokens / r0['kv_capacity_tokens']:.1f}x "
            "that, before the cache keeps any conversation whose user is thinking. With caching on and "
            "cached turns dropped when HBM is full, the sweep above falls off its frontier there.")
        offload = spill.get((spill_users[0], "local_first"))
        if offload:
            add("")
            add(f"The host behind each chip (`platform.host`: 2 TiB per 8 chips, each chip on its own PCIe "
                f"Gen5 x16 link) gives the replica {offload['host_blocks']} more blocks "
                f"({offload['host_blocks'] / r0['local_blocks']:.1f}x its HBM's) for the cache to offload "
                "into. There is no other place: the replica's chips are all it has, so spilling to a "
                "neighbour's HBM (`spill_to_remote`) would only move KV between chips that are all full.")
        add("")
        add("jalapeno-8, prefix caching on:")
        add("")
        add("| users | KV beyond HBM | tok/s/user | TPOT mean (ms) | TTFT median (s) | TTFT last turn (s) | "
            "E2E mean (s) | prompt tokens computed (M) | output tok/s per kW | "
            "hit rate | evicted | offloaded / restored blocks | host-link KV (TB) | copy time (s) | "
            "preemptions | HBM mean / peak | host peak blocks |")
        add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        ways = [("cached turns dropped", None),
                ("cached turns offloaded to host (`prefix_cache_offload: host`)", "local_first"),
                ("and running KV on the host when HBM is full (`kv_cache_placement: offload_to_host`)",
                 "offload_to_host")]
        findings = []
        for users in spill_users:
            got = [(label, drops.get(users) if key is None else spill.get((users, key))) for label, key in ways]
            got = [(label, r) for label, r in got if r]
            for label, r in got:
                add(f"| {users} | {label} | {r['intvty']:.1f} | {r['tpot_mean_ms']:.1f} | {r['ttft_s']:.3f} | "
                    f"{fmt(r['ttft_last_s'], '.3f')} | {r['e2el_mean_s']:.2f} | {r['prefilled_m']:.1f} | "
                    f"{fmt(r['out_per_kw'], '.1f')} | {fmt(r['hit_rate'], '.3f')} | {r['evicted']} | "
                    f"{fmt(r['offloaded'], 'd')} / {fmt(r['restored'], 'd')} | {r['host_link_tb']:.1f} | "
                    f"{r['copy_s']:.2f} | {r['preemptions']} | {100 * (r['mean_local'] or 0):.0f}% / "
                    f"{100 * r['peak_local']:.0f}% | {r['peak_host_blocks']} |")
            if len(got) >= 2:
                a, b = got[0][1], got[1][1]
                findings.append(
                    f"- {users} users: offloading the cache to the host instead of dropping it takes the hit rate "
                    f"from {a['hit_rate']:.3f} to {b['hit_rate']:.3f}, the median TTFT from {a['ttft_s']:.3f} s to "
                    f"{b['ttft_s']:.3f} s (the last turn's from {fmt(a['ttft_last_s'], '.2f')} s to "
                    f"{fmt(b['ttft_last_s'], '.2f')} s), the mean TPOT from {a['tpot_mean_ms']:.0f} ms to "
                    f"{b['tpot_mean_ms']:.0f} ms (the median, which sets the interactivity column, from "
                    f"{a['tpot_ms']:.1f} to {b['tpot_ms']:.1f} ms: steady decode steps dominate it, the stalls behind "
                    f"recomputed prompts do not), the mean E2E from {a['e2el_mean_s']:.1f} s to "
                    f"{b['e2el_mean_s']:.1f} s and output tokens per kW from {a['out_per_kw']:.1f} to {b['out_per_kw']:.1f}, for "
                    f"{b['host_link_tb']:.1f} TB over the host links ({b['copy_s']:.1f} s of copies the steps "
                    f"waited for): the replica computes {b['prefilled_m']:.1f} M prompt tokens instead of "
                    f"{a['prefilled_m']:.1f} M, the turns whose cache was dropped prefilling their whole "
                    "conversation again.")
            if len(got) >= 3:
                b, c = got[1][1], got[2][1]
                findings.append(
                    f"- {users} users: placing running KV on the host as well (read in place over the host link "
                    f"every step) moves {c['host_kv_tb']:.0f} TB of KV reads and appends over the links (every chip's slice, summed over the run) and the mean TPOT goes from {b['tpot_mean_ms']:.0f} to {c['tpot_mean_ms']:.0f} ms; "
                    f"interactivity {b['intvty']:.1f} -> {c['intvty']:.1f} tok/s/user, output tokens per kW "
                    f"{b['out_per_kw']:.1f} -> {c['out_per_kw']:.1f}, preemptions {b['preemptions']} -> "
                    f"{c['preemptions']}.")
        front = frontier(series[("jalapeno-8", True)])
        for users in spill_users:
            b = spill.get((users, "local_first"))
            if not b:
                continue
            beats = [r for r in front if b["intvty"] >= r["intvty"] and b["out_per_kw"] >= r["out_per_kw"]]
            beaten = [r for r in front if r["intvty"] >= b["intvty"] and r["out_per_kw"] >= b["out_per_kw"]]
            sweep = "the sweep above (which drops cached turns)"
            if beats:
                where = (f"beats {sweep} at " + ", ".join(str(r["users"]) for r in beats) + " users on both axes")
            elif beaten:
                where = f"is beaten by {sweep} at " + ", ".join(str(r["users"]) for r in beaten) + " users"
            else:
                where = f"extends the frontier of {sweep} to lower interactivity"
            findings.append(f"- With the cache offloaded, {users} users per replica ({b['intvty']:.1f} tok/s/user, "
                            f"{b['out_per_kw']:.1f} output tok/s per kW) {where}.")
        add("")
        for line in findings:
            add(line)
        add("")
    add("## What this does not cover")
    add("")
    add("- GB300 runs the `trtllm-gb200` profile; no GB300 agentic measurement is in the repo to check "
        "either side against. Neither side's prefix-cache hit path has been validated on silicon.")
    add("- Cache copies do not overlap the step (LMCache prefetches while other requests run), and the "
        "host's DRAM and CPU are not modelled beyond the link (docs/serving.md#not-modelled-yet).")
    add("- Requests are routed by user (a user stays on its replica), so every turn finds its own "
        "replica's cache; cache-aware routing of open-loop traffic is not modelled.")
    add("")
    with open(args.doc, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
