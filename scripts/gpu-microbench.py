#!/usr/bin/env python3
"""Kernel microbenchmarks on a real GPU, for calibrating a platform's tensor-core and HBM models.

Runs on a machine with an NVIDIA GPU and PyTorch (not part of the build or of CI). Measures, each
with CUDA events around CUDA-graph replays of back-to-back launches (medians of several replays,
after warm-up, inputs rotated over more than 4x the L2 so that weights come from HBM):

  - HBM bandwidth: device-to-device copy (read + write), read-only (a sum), write-only (a fill);
  - GEMM throughput, bf16 (torch.matmul, cuBLAS) and fp8 e4m3 (torch._scaled_mm, cuBLASLt), for
    M (tokens) from 1 (decode) to 16384 (prefill) against weight shapes K x N of real layers;
  - attention kernel time: decode (one query token per sequence, grouped-query heads, batch x
    context) and causal prefill (one sequence), flash attention through
    scaled_dot_product_attention;
  - board power (NVML) at idle and under sustained copy, decode-shaped GEMM and bf16/fp8 GEMM.

Writes one JSON file (written again after each section, so a run cut short keeps what it
measured). scripts/gpu-microbench-import turns it into workloads/validation/<gpu>-kernels.yaml;
`scoville kernels` compares a platform's models against that dataset.

Usage: gpu-microbench.py OUT.json [--quick]
"""

import argparse
import datetime
import json
import math
import platform
import statistics
import subprocess
import sys
import threading
import time

import torch

L2_ROTATE_BYTES = 256 * 2**20  # rotate inputs over at least this many bytes (H200 L2: 60 MB)
TARGET_REPLAY_S = 0.02  # one timed graph replay lasts about this long
REPLAYS = 7  # timed replays per case; the median is reported

DEV = torch.device("cuda")


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Result:
    def __init__(self, path):
        self.path = path
        self.data = {"method": {}, "environment": {}, "hbm": [], "gemm": [], "attention": [], "power": [],
                     "power_duty": [], "errors": []}

    def save(self):
        with open(self.path + ".tmp", "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
        import os
        os.replace(self.path + ".tmp", self.path)


def timed(fn_for_iteration, iterations, est_s):
    """Median seconds per launch of fn_for_iteration(i) for i in 0..iterations-1, replayed as a graph."""
    per_replay = max(1, min(400, int(TARGET_REPLAY_S / max(est_s, 1e-6))))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(3):  # warm-up: handles, workspaces, autotuning
            fn_for_iteration(i % iterations)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    used_graph = True
    try:
        with torch.cuda.graph(graph):
            for i in range(per_replay):
                fn_for_iteration(i % iterations)
        graph.replay()
        torch.cuda.synchronize()
        run = graph.replay
    except Exception:  # some kernels cannot be captured: fall back to plain launches
        used_graph = False
        torch.cuda.synchronize()

        def run():
            for i in range(per_replay):
                fn_for_iteration(i % iterations)
    times = []
    for _ in range(REPLAYS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / per_replay)
    del graph
    return {"seconds": statistics.median(times), "seconds_min": min(times), "seconds_max": max(times),
            "launches_per_replay": per_replay, "cuda_graph": used_graph}


def rotations(bytes_per_set):
    return max(1, min(64, math.ceil(L2_ROTATE_BYTES / max(bytes_per_set, 1))))


def environment(res):
    props = torch.cuda.get_device_properties(0)
    env = {
        "date": now_utc(),
        "gpu": props.name,
        "multiprocessors": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "python": platform.python_version(),
    }
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,power.limit,clocks.max.sm,clocks.max.mem,pstate",
             "--format=csv"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - informative only
        env["nvidia_smi"] = f"unavailable: {e}"
    res.data["environment"] = env
    res.data["method"] = {
        "timing": (f"CUDA events around CUDA-graph replays of back-to-back launches; each replay about "
                   f"{TARGET_REPLAY_S * 1e3:.0f} ms; median of {REPLAYS} replays after 3 warm-up launches"),
        "inputs": (f"random normal data; operands rotated over at least {L2_ROTATE_BYTES >> 20} MiB so that "
                   "weights and KV are read from HBM, not L2"),
        "hbm": "bytes moved / time: copy counts read + written bytes, sum counts read, fill counts written",
        "gemm": ("C[M,N] = A[M,K] x W[K,N]; bf16: torch.matmul (cuBLAS); fp8: torch._scaled_mm e4m3 x e4m3 -> "
                 "bf16 with per-tensor scales (cuBLASLt; M below 16 padded to 16, recorded as m_run); flop = 2 M N K; "
                 "bytes = A + W + C"),
        "attention": ("scaled_dot_product_attention, flash backend where it takes the case; decode: one query token "
                      "per sequence, the G query heads of a KV head as G query rows (grouped-query, exact); "
                      "prefill: causal, flop = 2 x 2 x H x L^2 x D / 2"),
        "power": ("NVML board power (nvmlDeviceGetPowerUsage) sampled every 50 ms over the last 2 s of a 4 s "
                  "sustained load; median, with SM and memory clocks"),
        "power_duty": ("as power, for a decode-shaped GEMM run in bursts of 16 launches (about 2 ms) with the GPU "
                       "idle for (1 - duty) / duty of a burst in between"),
    }
    res.save()


def bench_hbm(res, quick):
    sizes = [2**28, 2**30, 2**32] if not quick else [2**28]
    for size in sizes:
        n = size // 2
        src = torch.randn(n, dtype=torch.bfloat16, device=DEV)
        dst = torch.empty_like(src)
        for kind in ("copy", "read", "write"):
            try:
                if kind == "copy":
                    t = timed(lambda i: dst.copy_(src), 1, 2 * size / 4e12)
                    moved = 2 * size
                elif kind == "read":
                    acc = torch.empty((), dtype=torch.float32, device=DEV)
                    t = timed(lambda i: torch.sum(src, dim=0, dtype=torch.float32, out=acc), 1, size / 4e12)
                    moved = size
                else:
                    t = timed(lambda i: dst.fill_(1.0), 1, size / 4e12)
                    moved = size
                t.update({"kind": kind, "bytes": moved, "buffer_bytes": size,
                          "bandwidth_bytes_per_s": moved / t["seconds"]})
                res.data["hbm"].append(t)
                print(f"hbm {kind:5s} {size >> 20:6d} MiB  {moved / t['seconds'] / 1e12:6.3f} TB/s", flush=True)
            except Exception as e:  # noqa: BLE001 - record and go on
                res.data["errors"].append(f"hbm {kind} {size}: {e!r}")
        del src, dst
        torch.cuda.empty_cache()
    res.save()


# Weight shapes K x N of real layers (per GPU): square 4k and 8k, Llama 3.1 70B MLP up/gate (8192 x
# 28672) and down (28672 x 8192), GPT-OSS 120B attention QKV (2880 x 5120) and one MoE expert's
# gate+up (2880 x 5760).
GEMM_SHAPES = [(4096, 4096), (8192, 8192), (8192, 28672), (28672, 8192), (2880, 5120), (2880, 5760)]
GEMM_M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]


def bench_gemm(res, quick):
    shapes = GEMM_SHAPES if not quick else GEMM_SHAPES[:2]
    ms = GEMM_M if not quick else [1, 64, 4096]
    fp8 = torch.float8_e4m3fn
    for (k, n) in shapes:
        for dtype in ("bf16", "fp8"):
            elem = 2 if dtype == "bf16" else 1
            w_bytes = k * n * elem
            nw = rotations(w_bytes)
            try:
                if dtype == "bf16":
                    ws = [torch.randn(k, n, dtype=torch.bfloat16, device=DEV) for _ in range(nw)]
                else:  # cuBLASLt fp8 wants the second operand column-major
                    ws = [torch.randn(n, k, device=DEV).to(fp8).t() for _ in range(nw)]
            except Exception as e:  # noqa: BLE001
                res.data["errors"].append(f"gemm {dtype} {k}x{n} weights: {e!r}")
                continue
            scale = torch.tensor(1.0, dtype=torch.float32, device=DEV)
            for m in ms:
                # cuBLASLt fp8 needs every dimension a multiple of 16: smaller M runs padded (as serving
                # engines pad a small decode batch); flop and bytes count the M rows asked for.
                m_run = m if dtype == "bf16" else -(-m // 16) * 16
                a_bytes = m * k * elem
                c_bytes = m * n * 2
                na = max(1, min(nw, rotations(a_bytes)))
                try:
                    if dtype == "bf16":
                        As = [torch.randn(m, k, dtype=torch.bfloat16, device=DEV) for _ in range(na)]
                        c = torch.empty(m, n, dtype=torch.bfloat16, device=DEV)

                        def fn(i, As=As, c=c):
                            torch.matmul(As[i % len(As)], ws[i % len(ws)], out=c)
                    else:
                        As = [torch.randn(m_run, k, device=DEV).to(fp8) for _ in range(na)]

                        def fn(i, As=As):
                            torch._scaled_mm(As[i % len(As)], ws[i % len(ws)], scale_a=scale, scale_b=scale,
                                             out_dtype=torch.bfloat16)
                    flop = 2.0 * m * n * k
                    est = max(flop / (700e12 if dtype == "bf16" else 1400e12), (w_bytes + a_bytes) / 4e12)
                    t = timed(fn, max(nw, na), est)
                    t.update({"dtype": dtype, "m": m, "m_run": m_run, "k": k, "n": n, "flop": flop,
                              "bytes": a_bytes + w_bytes + c_bytes, "weight_rotations": nw,
                              "flop_per_s": flop / t["seconds"],
                              "bytes_per_s": (a_bytes + w_bytes + c_bytes) / t["seconds"]})
                    res.data["gemm"].append(t)
                    print(f"gemm {dtype} m={m:5d} k={k:5d} n={n:5d}  {t['seconds'] * 1e6:9.1f} us  "
                          f"{flop / t['seconds'] / 1e12:7.1f} TFLOP/s  "
                          f"{(a_bytes + w_bytes + c_bytes) / t['seconds'] / 1e12:5.2f} TB/s", flush=True)
                    del As
                except Exception as e:  # noqa: BLE001
                    res.data["errors"].append(f"gemm {dtype} m={m} {k}x{n}: {e!r}"[:400])
            del ws
            torch.cuda.empty_cache()
            res.save()


def sdpa_backend_context():
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return lambda: sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]), "flash|efficient"
    except Exception:  # noqa: BLE001
        import contextlib
        return contextlib.nullcontext, "default"


def bench_attention(res, quick):
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ctx, backends = sdpa_backend_context()
    d = 128
    # Decode: 64 query heads over 8 KV heads (Llama 3.1 70B at TP 1; GPT-OSS has 64 / 8 of 64 dims).
    h, hkv = 64, 8
    g = h // hkv
    decode = [(b, l) for b in (1, 8, 64) for l in (1024, 4096, 8192, 16384, 32768, 65536) if b * l <= 2**21]
    if quick:
        decode = [(8, 8192)]
    for (b, l) in decode:
        try:
            kv_bytes = 2 * b * hkv * l * d * 2
            nr = rotations(kv_bytes)
            ks = [torch.randn(b, hkv, l, d, dtype=torch.bfloat16, device=DEV) for _ in range(nr)]
            vs = [torch.randn(b, hkv, l, d, dtype=torch.bfloat16, device=DEV) for _ in range(nr)]
            q = torch.randn(b, hkv, g, d, dtype=torch.bfloat16, device=DEV)

            def fn(i):
                with ctx():
                    sdpa(q, ks[i % nr], vs[i % nr])
            flop = 2.0 * 2.0 * b * h * l * d
            t = timed(fn, nr, kv_bytes / 4e12)
            t.update({"kind": "decode", "batch": b, "context": l, "heads": h, "kv_heads": hkv, "head_dim": d,
                      "flop": flop, "bytes": kv_bytes, "bytes_per_s": kv_bytes / t["seconds"],
                      "flop_per_s": flop / t["seconds"], "backends": backends})
            res.data["attention"].append(t)
            print(f"attn decode b={b:3d} L={l:6d}  {t['seconds'] * 1e6:9.1f} us  "
                  f"{kv_bytes / t['seconds'] / 1e12:5.2f} TB/s", flush=True)
            del ks, vs, q
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            res.data["errors"].append(f"attention decode b={b} L={l}: {e!r}"[:400])
    # Prefill: 8 query heads and 8 KV heads... as multi-head (the kernel's work is the same per head), causal.
    hp = 32
    prefill = [1024, 2048, 4096, 8192, 16384, 32768] if not quick else [4096]
    for l in prefill:
        try:
            qkv_bytes = 3 * hp * l * d * 2
            nr = rotations(qkv_bytes)
            qs = [torch.randn(1, hp, l, d, dtype=torch.bfloat16, device=DEV) for _ in range(nr)]
            ks = [torch.randn(1, hp, l, d, dtype=torch.bfloat16, device=DEV) for _ in range(nr)]
            vs = [torch.randn(1, hp, l, d, dtype=torch.bfloat16, device=DEV) for _ in range(nr)]

            def fn(i):
                with ctx():
                    sdpa(qs[i % nr], ks[i % nr], vs[i % nr], is_causal=True)
            flop = 2.0 * 2.0 * hp * l * l * d / 2.0
            t = timed(fn, nr, flop / 400e12)
            t.update({"kind": "prefill", "batch": 1, "context": l, "heads": hp, "kv_heads": hp, "head_dim": d,
                      "flop": flop, "bytes": qkv_bytes + hp * l * d * 2, "flop_per_s": flop / t["seconds"],
                      "bytes_per_s": (qkv_bytes + hp * l * d * 2) / t["seconds"], "backends": backends})
            res.data["attention"].append(t)
            print(f"attn prefill L={l:6d}  {t['seconds'] * 1e6:9.1f} us  {flop / t['seconds'] / 1e12:7.1f} TFLOP/s",
                  flush=True)
            del qs, ks, vs
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            res.data["errors"].append(f"attention prefill L={l}: {e!r}"[:400])
    res.save()


class PowerSampler:
    def __init__(self):
        import pynvml
        self.nv = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        self.samples = []
        self.stop = threading.Event()

    def limit_w(self):
        return self.nv.nvmlDeviceGetPowerManagementLimit(self.handle) / 1000.0

    def sample(self):
        nv, h = self.nv, self.handle
        return (time.monotonic(), nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))

    def run(self):
        while not self.stop.is_set():
            self.samples.append(self.sample())
            time.sleep(0.05)

    def measure(self, load, seconds=4.0, window=2.0):
        self.samples = []
        self.stop.clear()
        thread = threading.Thread(target=self.run)
        thread.start()
        end = time.monotonic() + seconds
        launches = 0
        while time.monotonic() < end:
            if load is None:
                time.sleep(0.05)
            else:
                load()
                launches += 1
                if launches % 32 == 0:
                    torch.cuda.synchronize()
        torch.cuda.synchronize()
        elapsed = time.monotonic() - (end - seconds)
        self.stop.set()
        thread.join()
        last = [s for s in self.samples if s[0] >= end - window]
        return {"watts": statistics.median(s[1] for s in last), "watts_max": max(s[1] for s in last),
                "sm_clock_mhz": statistics.median(s[2] for s in last),
                "mem_clock_mhz": statistics.median(s[3] for s in last),
                "temperature_c": max(s[4] for s in last), "samples": len(last), "launches": launches,
                "load_seconds": elapsed}


def bench_power(res, quick):
    try:
        sampler = PowerSampler()
    except Exception as e:  # noqa: BLE001
        res.data["errors"].append(f"power: NVML unavailable: {e!r}")
        return
    res.data["environment"]["power_limit_w"] = sampler.limit_w()
    fp8 = torch.float8_e4m3fn
    src = torch.randn(2**30, dtype=torch.bfloat16, device=DEV)
    dst = torch.empty_like(src)
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=DEV)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=DEV)
    c = torch.empty(8192, 8192, dtype=torch.bfloat16, device=DEV)
    a8 = a.to(fp8)
    b8 = b.t().contiguous().to(fp8).t()
    scale = torch.tensor(1.0, dtype=torch.float32, device=DEV)
    ws = [torch.randn(8192, 28672, dtype=torch.bfloat16, device=DEV) for _ in range(4)]
    x = torch.randn(8, 8192, dtype=torch.bfloat16, device=DEV)
    y = torch.empty(8, 28672, dtype=torch.bfloat16, device=DEV)
    acc = torch.empty((), dtype=torch.float32, device=DEV)
    kv = [torch.randn(8, 8, 32768, 128, dtype=torch.bfloat16, device=DEV) for _ in range(2)]
    q = torch.randn(8, 8, 8, 128, dtype=torch.bfloat16, device=DEV)
    state = {"i": 0}

    def decode_gemm():
        for _ in range(16):
            state["i"] += 1
            torch.matmul(x, ws[state["i"] % 4], out=y)
    def decode_attention():
        for _ in range(8):
            torch.nn.functional.scaled_dot_product_attention(q, kv[0], kv[1])
    time.sleep(5.0)  # let the clocks fall back after the previous sections
    loads = [("idle", None, {}),
             ("hbm_copy", lambda: dst.copy_(src), {"bytes": 2 * 2 * 2**30}),
             ("hbm_read", lambda: torch.sum(src, dim=0, dtype=torch.float32, out=acc), {"bytes": 2 * 2**30}),
             ("hbm_write", lambda: dst.fill_(1.0), {"bytes": 2 * 2**30}),
             ("attention_decode_b8_L32k", decode_attention, {"bytes": 8 * 2 * 8 * 8 * 32768 * 128 * 2}),
             ("gemm_decode_bf16_m8_8192x28672", decode_gemm, {"bytes": 16 * 8192 * 28672 * 2}),
             ("gemm_bf16_8192", lambda: torch.matmul(a, b, out=c), {"flop": 2.0 * 8192**3}),
             ("gemm_fp8_8192", lambda: torch._scaled_mm(a8, b8, scale_a=scale, scale_b=scale,
                                                       out_dtype=torch.bfloat16), {"flop": 2.0 * 8192**3})]
    if quick:
        loads = loads[:2]
    for name, load, work in loads:
        try:
            r = sampler.measure(load)
            r.update({"load": name})
            for key, per_launch in work.items():  # the load's average rate over the whole run
                r[key + "_per_s"] = per_launch * r["launches"] / r["load_seconds"]
            res.data["power"].append(r)
            print(f"power {name:34s} {r['watts']:6.1f} W  SM {r['sm_clock_mhz']} MHz  mem {r['mem_clock_mhz']} MHz",
                  flush=True)
        except Exception as e:  # noqa: BLE001
            res.data["errors"].append(f"power {name}: {e!r}"[:400])
    res.save()


def bench_power_duty(res, quick):
    """Board power of a decode-shaped GEMM (bf16, M = 8, 8192 x 28672) run in bursts of about 2 ms
    with the GPU idle in between: how power follows the share of time the HBM streams, as in a
    serving step that is not all weight reads."""
    try:
        sampler = PowerSampler()
    except Exception as e:  # noqa: BLE001
        res.data["errors"].append(f"power duty: NVML unavailable: {e!r}")
        return
    ws = [torch.randn(8192, 28672, dtype=torch.bfloat16, device=DEV) for _ in range(4)]
    x = torch.randn(8, 8192, dtype=torch.bfloat16, device=DEV)
    y = torch.empty(8, 28672, dtype=torch.bfloat16, device=DEV)
    burst = 16  # launches of about 110 us
    for _ in range(3):
        for i in range(burst):
            torch.matmul(x, ws[i % 4], out=y)
    torch.cuda.synchronize()
    t0 = time.monotonic()
    for i in range(burst * 10):
        torch.matmul(x, ws[i % 4], out=y)
    torch.cuda.synchronize()
    burst_s = (time.monotonic() - t0) / 10
    res.data.setdefault("power_duty", [])
    for duty in ([1.0, 0.5, 0.25, 0.1] if not quick else [0.5]):
        def load(duty=duty):
            for i in range(burst):
                torch.matmul(x, ws[i % 4], out=y)
            torch.cuda.synchronize()
            if duty < 1.0:
                time.sleep(burst_s * (1.0 - duty) / duty)
        try:
            r = sampler.measure(load)
            r.update({"load": "gemm_decode_bf16_m8_8192x28672", "duty": duty, "burst_seconds": burst_s,
                      "bytes_per_s": 16 * 8192 * 28672 * 2 * r["launches"] / r["load_seconds"]})
            res.data["power_duty"].append(r)
            print(f"power duty {duty:4.2f}: {r['watts']:6.1f} W at {r['bytes_per_s'] / 1e12:5.2f} TB/s, "
                  f"SM {r['sm_clock_mhz']} MHz", flush=True)
        except Exception as e:  # noqa: BLE001
            res.data["errors"].append(f"power duty {duty}: {e!r}"[:400])
    res.save()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="JSON file to write")
    parser.add_argument("--quick", action="store_true", help="a few cases of each kind (a smoke test)")
    parser.add_argument("--only", default="hbm,gemm,attention,power,power_duty",
                        help="sections to run, comma-separated")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu-microbench: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    res = Result(args.out)
    environment(res)
    start = time.monotonic()
    sections = {"hbm": bench_hbm, "gemm": bench_gemm, "attention": bench_attention, "power": bench_power,
                "power_duty": bench_power_duty}
    for name in args.only.split(","):
        t0 = time.monotonic()
        sections[name](res, args.quick)
        print(f"== {name}: {time.monotonic() - t0:.1f} s", flush=True)
    res.data["environment"]["wall_seconds"] = round(time.monotonic() - start, 1)
    res.save()
    print(f"errors: {len(res.data['errors'])}")
    for e in res.data["errors"]:
        print("  " + e)


if __name__ == "__main__":
    main()
