#!/usr/bin/python3
"""Plot a power calibration: measured board power against the simulated power of each load, the
training points and the predicted points marked apart (the figure behind `scoville calibrate-power`).

    /usr/bin/python3 scripts/power_calibration_plot.py CALIBRATE_POWER_JSON OUT_PNG

Exit codes: 0 ok; 2 bad input (one `error[...]` line on stderr). Needs Debian's python3-matplotlib.
"""

import json
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: power_calibration_plot.py CALIBRATE_POWER_JSON OUT_PNG", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            data = json.load(f)
        points = data["points"]
        chip, dataset = data["chip_type"], data["dataset"]
        mape = data["mape_percent"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error[bad-input]: {argv[1]}: {e}", file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 6.0), dpi=110)
    top = max(max(p["measured_w"], p["simulated_w"]) for p in points) * 1.08
    ax.plot([0, top], [0, top], color="#7f7f7f", linewidth=1, label="simulated = measured")
    ax.fill_between([0, top], [0, 0.9 * top], [0, 1.1 * top], color="#7f7f7f", alpha=0.12, label="within 10%")
    for training, marker, color, label in ((True, "o", "#1f77b4", "training"), (False, "^", "#d62728", "predicted")):
        chosen = [p for p in points if p["training"] == training]
        ax.scatter([p["measured_w"] for p in chosen], [p["simulated_w"] for p in chosen], marker=marker, s=46,
                   color=color, label=f"{label} ({len(chosen)})", zorder=3)
        for p in chosen:
            ax.annotate(p["id"].replace("power-", ""), (p["measured_w"], p["simulated_w"]), fontsize=7,
                        xytext=(4, -9), textcoords="offset points")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("measured board power (W)")
    ax.set_ylabel("simulated power (W)")
    ax.set_title(f"{chip} on {dataset}: MAPE training {mape['training']:.1f}%, predicted {mape['predicted']:.1f}%",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
