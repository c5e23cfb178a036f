"""Renders the benchmark tables of docs/benchmarks.md and README.md from the bench JSON.

    python3 bench/report.py            # rewrite the generated blocks in place
    python3 bench/report.py --check    # exit 1 if a file would change (writes nothing)

Standard library only, so it runs without the venv. It reads bench/results.json,
bench/ablation.json (bench/attention.py), bench/gated_delta.json (bench/gated_delta.py)
and bench/model.json (bench/model.py), and replaces what lies between

    <!-- generated:NAME:begin -->  and  <!-- generated:NAME:end -->

in docs/benchmarks.md (NAME one of BLOCKS below) and between <!-- results:begin --> and
<!-- results:end --> in README.md. Everything outside the markers is prose and left alone.
The tables are the ones the bench scripts print with --markdown; names, shapes and
constants are read from the scripts themselves (their top-level literal assignments), so
the two cannot drift apart.
"""

import argparse
import ast
import json
import operator
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
TARGETS = ("v6e", "tpu7x")


def constants(path):
    """The top-level assignments of `path` whose values are literals, or expressions of
    literals and earlier such names (+, -, *, **, //): evaluated without running the
    script (which imports jax)."""
    binary = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv}
    names = {}

    def value(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Tuple):
            return tuple(value(item) for item in node.elts)
        if isinstance(node, ast.List):
            return [value(item) for item in node.elts]
        if isinstance(node, ast.Dict):
            return {value(key): value(item) for key, item in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and type(node.op) in binary:
            return binary[type(node.op)](value(node.left), value(node.right))
        raise ValueError(ast.dump(node))

    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.Assign):
            continue
        try:
            result = value(node.value)
        except (ValueError, KeyError):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                names[target.id] = result
            elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                names.update(zip((e.id for e in target.elts), result))
    return names


ATTENTION = constants(BENCH / "attention.py")
GDN = constants(BENCH / "gated_delta.py")


def load(name):
    return json.loads((BENCH / name).read_text())


def number(value):
    return f"{value:,}" if value else "—"


def percent(value):
    return f"{value:.1%}" if value else ""


def ratio(value):
    return f"{value:.2f}x" if value else "—"


# Attention (bench/attention.py --markdown).

def shape_name(shape):
    """mha8_s2048 -> MHA 8, 2048; causal_gqa32_8_s8192_d256 -> causal GQA 32/8, 8192, d256."""
    known = {x[0]: x for group in ATTENTION["SHAPES"].values() for x in group}
    if shape not in known:
        return shape.replace(" bf16", "")
    _, _, hq, hkv, s, d, causal = known[shape]
    heads = f"MHA {hq}" if hq == hkv else f"GQA {hq}/{hkv}"
    return f"{'causal ' if causal else ''}{heads}, {s}" + (f", d{d}" if d != 128 else "")


def shape_order():
    return list(dict.fromkeys(shape[0] for group in ("all", "quick", "ablation") for shape in ATTENTION["SHAPES"][group]))


def anchor_table():
    """bench/results.json as bench/attention.py --markdown prints it."""
    rows = load("results.json")
    names = ATTENTION["KERNEL_NAMES"]
    header = " | ".join(f"{t} cycles | {t} eff." for t in TARGETS)
    lines = [f"| kernel | config | shape | {header} | FlyWheel speed-up {' / '.join(TARGETS)} |",
             "| --- | --- | --- |" + " ---: |" * (2 * len(TARGETS) + 1)]
    shapes, kernels = shape_order(), list(names)
    position = lambda key, order: order.index(key) if key in order else len(order)
    groups = sorted(dict.fromkeys((r["kernel"], r["shape"]) for r in rows),
                    key=lambda group: (position(group[1], shapes), position(group[0], kernels)))
    for kernel, shape in groups:
        by_target = {r["target"]: r for r in rows if (r["kernel"], r["shape"]) == (kernel, shape)}
        present = [by_target.get(t) for t in TARGETS]
        configs = {t: r["config"] for t, r in zip(TARGETS, present) if r and r["config"]}
        config = (next(iter(configs.values()), "") if len(set(configs.values())) <= 1
                  else "; ".join(f"{t} {c}" for t, c in configs.items()))
        cells = " | ".join(f"{number(r and r['cycles'])} | {percent(r and r['efficiency'])}" for r in present)
        speedups = [r and r.get("flywheel_speedup") for r in present]
        speedup = "" if kernel == "flywheel" or "sanity" in kernel else " / ".join(ratio(x) for x in speedups)
        lines.append(f"| {names.get(kernel, kernel)} | {config} | {shape_name(shape)} | {cells} | {speedup} |")
    return lines


def ablation_table():
    """bench/ablation.json as bench/attention.py --markdown prints it."""
    table = load("ablation.json")
    header = " | ".join(f"{t} cycles | {t} eff. | vs baseline | vs best anchor" for t in TARGETS)
    lines = [f"| transform | shape | {header} |", "| --- | --- |" + " ---: |" * (4 * len(TARGETS))]
    for variant, shape in dict.fromkeys((r["variant"], r["shape"]) for r in table):
        by_target = {r["target"]: r for r in table if (r["variant"], r["shape"]) == (variant, shape)}
        cells = " | ".join(f"{number(r and r['cycles'])} | {percent(r and r['efficiency'])} | "
                           f"{ratio(r and r['vs_baseline'])} | {ratio(r and r['vs_best_anchor'])}"
                           for r in (by_target.get(t) for t in TARGETS))
        lines.append(f"| {variant} | {shape_name(shape)} | {cells} |")
    return lines


# Gated DeltaNet (bench/gated_delta.py --markdown).

def chunked_flops(length):
    """bench/gated_delta.py's flop count of the chunked form at `length` tokens."""
    c, dk, dv = GDN["CHUNK"], GDN["DIM"], GDN["DIM"]
    per_chunk = 2 * c * c * dk * 2 + 2 * c * c * (dk + dv) + 2 * c * dk * dv * 3 + 2 * c * c * dv
    return GDN["VALUE_HEADS"] * (length // c) * per_chunk


def gdn_row(rows, kernel, length, target):
    return next((r for r in rows if (r["kernel"], r["length"], r["target"]) == (kernel, length, target)), None)


def gdn_reference(rows, length, target):
    """The FlyWheel row the others are compared with: the full default kernel where it has
    an estimate, else its extrapolation from one grid step's heads."""
    for kernel in (GDN["FLYWHEEL"][-1][0], GDN["SLICED"]):
        row = gdn_row(rows, kernel, length, target)
        if row and row["cycles"]:
            return row
    return None


def gdn_efficiency(row, digits):
    peak = ATTENTION["PEAK"][row["target"]]
    return f"{chunked_flops(row['length']) / (row['cycles'] * peak):.{digits}%}" if row["cycles"] else "—"


def gdn_speedup(rows, row):
    reference = gdn_reference(rows, row["length"], row["target"])
    if not row["cycles"] or not reference or reference is row:
        return ""
    return f"{row['cycles'] / reference['cycles']:.2f}x"


def gated_delta_table():
    rows = load("gated_delta.json")

    def cells(kernel, length, target):
        row = gdn_row(rows, kernel, length, target)
        if not row or not row["cycles"]:
            return ["no estimate" if row else "", "", ""]
        shown = f"**{row['cycles']:,}**" if row is gdn_reference(rows, length, target) else f"{row['cycles']:,}"
        return [shown, gdn_efficiency(row, 2), gdn_speedup(rows, row)]

    lines = ["| kernel | tokens | v6e cycles | v6e eff. | vs FlyWheel | tpu7x cycles | tpu7x eff. | vs FlyWheel |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    kernels = [GDN["XLA"], GDN["CHUNKED"]] + [name for name, _, _ in GDN["FLYWHEEL"]] + [GDN["SLICED"], GDN["SLICED_DEFAULT"]]
    for length in sorted({row["length"] for row in rows}):
        for kernel in kernels:
            if any(r["kernel"] == kernel and r["length"] == length for r in rows):
                lines.append("| " + " | ".join([kernel, str(length)] + cells(kernel, length, "v6e")
                                               + cells(kernel, length, "tpu7x")) + " |")
    return lines


# The whole-model demo (bench/model.py's table).

def why_not(text):
    """One line of why a piece has no estimate: the piece, and libtpu's reason without
    the instruction it names."""
    piece, _, detail = text.partition(": ")
    match = re.search(r"FAILED_PRECONDITION: (.*?)(?:\s+%|\s+FIFO name:|$)", detail)
    if match:
        return f"{piece}: libtpu's profiler aborted, \"{match.group(1).rstrip('.: ')}\""
    match = re.search(r"no estimate \(0 cycles\) for .*", detail)
    return f"{piece}: {match.group(0) if match else detail}"


def model_table():
    runs = load("model.json")
    lines = []
    for config in dict.fromkeys(run["config"] for run in runs):
        if lines:
            lines.append("")
        # Runs from before the version was recorded are libtpu 0.0.50.1's.
        versions = sorted({run.get("libtpu", "0.0.50.1") for run in runs if run["config"] == config})
        lines += [f"Qwen3-Next-style stack: {config}; batch 1, bf16; libtpu {' and '.join(versions)} static cycles", "",
                  "| target | tokens | part | layers | kernels found | before cycles | after cycles | speed-up |",
                  "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
        mine = sorted((run for run in runs if run["config"] == config),
                      key=lambda run: (run["length"], TARGETS.index(run["target"]) if run["target"] in TARGETS else 99))
        reasons = []
        for run in mine:
            for row in run["rows"]:
                show = lambda value: f"{value:,}" if value is not None else "—"
                speedup = f"{row['before'] / row['after']:.2f}x" if row["before"] and row["after"] else "—"
                lines.append(f"| {row['target']} | {row['length']} | {row['part']} | {row.get('layers', '')} | "
                             f"{row.get('kernels', '')} | {show(row['before'])} | {show(row['after'])} | {speedup} |")
                for why in row["why"]:
                    reasons.append(f"- {row['length']} tokens, {why_not(why)}")
        if reasons:
            lines += ["", "Why a cell is —, no estimate (never a number):", ""] + list(dict.fromkeys(reasons))
    return lines


# The README's results table: the headline numbers.

def results_table():
    rows = load("results.json")
    find = lambda kernel, shape, target: next(
        (r for r in rows if (r["kernel"], r["shape"], r["target"]) == (kernel, shape, target)), None)
    lines = ["Attention, batch 1, bf16, head dim 128 unless noted; FlyWheel's static cycles, efficiency against the "
             "MXU peak, and its speed-up over tokamax's Splash and tuned jax Splash (static variants):", "",
             "| shape | " + " | ".join(f"{t} FlyWheel | {t} eff. | vs tokamax | vs jax Splash" for t in TARGETS) + " |",
             "| --- |" + " ---: |" * (4 * len(TARGETS))]
    for shape in shape_order():
        flywheel = [find("flywheel", shape, t) for t in TARGETS]
        if not any(r and r["cycles"] for r in flywheel):
            continue
        cells = []
        for target, own in zip(TARGETS, flywheel):
            speedups = [(find(kernel, shape, target) or {}).get("flywheel_speedup")
                        for kernel in ("tokamax splash", "jax splash static tuned")]
            cells.append(f"{number(own and own['cycles'])} | {percent(own and own['efficiency'])} | "
                         + " | ".join(ratio(x) for x in speedups))
        lines.append(f"| {shape_name(shape)} | " + " | ".join(cells) + " |")
    gdn = load("gated_delta.json")
    lines += ["", "Gated DeltaNet prefill, 16 query/key and 32 value heads x 128, bf16, chunks of 64; FlyWheel's "
              "static cycles (* extrapolated from one grid step's heads) and its speed-up over XLA's chunked form and "
              "per-token scan (both XLA figures are themselves extrapolated from a head slice or a short unrolling):", "",
              "| tokens | " + " | ".join(f"{t} FlyWheel | {t} eff. | vs XLA chunked | vs XLA scan" for t in TARGETS) + " |",
              "| ---: |" + " ---: |" * (4 * len(TARGETS))]
    for length in sorted({row["length"] for row in gdn}):
        cells = []
        for target in TARGETS:
            own = gdn_reference(gdn, length, target)
            if not own:
                cells.append("— | | — | —")
                continue
            mark = "*" if own["kernel"] == GDN["SLICED"] else ""
            speedups = [gdn_speedup(gdn, row) if row else "—"
                        for row in (gdn_row(gdn, kernel, length, target) for kernel in (GDN["CHUNKED"], GDN["XLA"]))]
            cells.append(f"{own['cycles']:,}{mark} | {gdn_efficiency(own, 1)} | " + " | ".join(x or "—" for x in speedups))
        lines.append(f"| {length} | " + " | ".join(cells) + " |")
    lines += ["", "libtpu 0.0.50.1 static cycles (a simulation of the compiled schedule, not measured time); "
              "the full tables and how they are made: [docs/benchmarks.md](docs/benchmarks.md)."]
    return lines


BLOCKS = {"anchor": anchor_table, "ablation": ablation_table, "gated-delta": gated_delta_table, "model": model_table}
FILES = {ROOT / "docs" / "benchmarks.md": "generated", ROOT / "README.md": "results"}


def render(text, path):
    """`text` with every marked block regenerated; an unknown block name is an error."""
    if path.name == "README.md":
        pattern = re.compile(r"(<!-- results:begin -->\n)(.*?)(<!-- results:end -->)", re.S)
        blocks = {None: results_table}
    else:
        pattern = re.compile(r"(<!-- generated:([a-z0-9-]+):begin -->\n)(.*?)(<!-- generated:\2:end -->)", re.S)
        blocks = BLOCKS
    found = []

    def replace(match):
        name = match.group(2) if path.name != "README.md" else None
        if name not in blocks:
            raise SystemExit(f"{path.relative_to(ROOT)}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        found.append(name)
        source = {None: "bench/results.json, bench/gated_delta.json", "anchor": "bench/results.json",
                  "ablation": "bench/ablation.json", "gated-delta": "bench/gated_delta.json",
                  "model": "bench/model.json"}[name]
        body = [f"<!-- made by bench/report.py from {source}; edit the JSON or the script, not this block -->"]
        return match.group(1) + "\n".join(body + blocks[name]()) + "\n" + match.groups()[-1]

    result = pattern.sub(replace, text)
    if not found:
        raise SystemExit(f"{path.relative_to(ROOT)}: no generated block found")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file would change; write nothing")
    arguments = parser.parse_args()
    stale = []
    for path in FILES:
        text = path.read_text()
        new = render(text, path)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not arguments.check:
                path.write_text(new)
    if arguments.check:
        for path in stale:
            print(f"{path}: out of date; run python3 bench/report.py", file=sys.stderr)
        sys.exit(1 if stale else 0)
    for path in stale:
        print(f"rewrote {path}")


if __name__ == "__main__":
    main()
