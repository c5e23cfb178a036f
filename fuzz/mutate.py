"""A deterministic mutation fuzzer for flywheel-opt (issue 38): mutants of the repository's
test inputs go through three modes, and every outcome that is not a clean result or a
clean error is a finding.

    .venv/bin/python fuzz/mutate.py [--seed N] [--count N | --minutes M] [--modes parse,raise,tpu]
        [--tool target/release/flywheel-opt] [--timeout S] [--save DIR] [--only-seeds GLOB]
        [--keep N,N...]
    .venv/bin/python fuzz/mutate.py --replay fuzz/regressions

Seeds: the generic-form programs under test/ (fixtures, inputs, the real-library corpus).
Each mutant applies one to three mutations, chosen by a seeded generator so a run is
reproducible from its seed: an integer literal replaced by an extreme (0, -1, 2^31, 2^63 - 1,
-2^63...), a float by NaN, ±inf, 0 or a huge value, a string attribute emptied, a line
deleted or duplicated, two lines swapped, the text cut short, a byte flipped, a shape
dimension changed. Modes:
- parse: `flywheel-opt FILE -o OUT` (parse, verify, print);
- raise: `--pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-attention,
  flywheel-raise-gated-delta,flywheel-verify)'`;
- tpu:   `--pass-pipeline='builtin.module(flywheel-tpu{target=v6e})'`.
A finding is a crash (a signal, or an exit code other than 0, 1 and 2), a contained panic
("internal error"), a silent failure (non-zero exit, nothing on stderr), a hang (past
--timeout), or a failure that leaves an output file behind. Findings are written to --save
(default fuzz/findings/, not committed) as the mutant and a line saying how to reproduce.
Prints one line per finding and a summary; exits 1 if there are findings. `--keep` writes
the mutants with those numbers to --save whatever their outcome (to keep a finding as a
regression input once it is fixed); `--replay DIR` runs every `NAME-MODE.mlir` in DIR in its
mode instead of fuzzing (fuzz/regressions holds the findings fixed so far).
"""

import argparse
import glob
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODES = {
    "parse": [],
    "raise": ["--pass-pipeline=builtin.module(flywheel-normalize,flywheel-raise-attention,"
              "flywheel-raise-gated-delta,flywheel-verify)"],
    "tpu": ["--pass-pipeline=builtin.module(flywheel-tpu{target=v6e})"],
}
EXTREME_INTEGERS = ["0", "-1", "1", "2147483647", "2147483648", "4294967296", "9223372036854775807",
                    "-9223372036854775808", "65536"]
EXTREME_FLOATS = ["0x7FC00000", "0x7F800000", "0xFF800000", "0.000000e+00", "1.000000e+38", "-1.000000e+38"]
INTEGER = re.compile(r"(?<![\w.%#x])-?\d+(?![\w.])")
FLOAT = re.compile(r"-?\d+\.\d+e[+-]\d+")
STRING_ATTRIBUTE = re.compile(r'= "([^"\\]*)"')
DIMENSION = re.compile(r"tensor<((?:\d+x)+)")


def seeds(only):
    patterns = ["test/fixtures/*.mlir", "test/Inputs/*.mlir", "test/Inputs/real/*.mlir",
                "test/transforms/Inputs/*.mlir", "test/lower/Inputs/*.mlir"]
    files = sorted({path for pattern in patterns for path in glob.glob(str(ROOT / pattern))})
    files = [path for path in files if "model_64_layers" not in path]
    if only:
        files = [path for path in files if glob.fnmatch.fnmatch(os.path.basename(path), only)]
    return files


def mutate(text, rng):
    """One mutation of `text`: (new text, what was done)."""
    lines = text.split("\n")
    kind = rng.choice(["integer", "integer", "float", "string", "delete", "duplicate", "swap",
                       "truncate", "byte", "dimension"])
    if kind == "integer":
        matches = list(INTEGER.finditer(text))
        if matches:
            m = rng.choice(matches)
            value = rng.choice(EXTREME_INTEGERS)
            return text[:m.start()] + value + text[m.end():], f"integer at {m.start()} -> {value}"
    if kind == "float":
        matches = list(FLOAT.finditer(text))
        if matches:
            m = rng.choice(matches)
            value = rng.choice(EXTREME_FLOATS)
            return text[:m.start()] + value + text[m.end():], f"float at {m.start()} -> {value}"
    if kind == "string":
        matches = list(STRING_ATTRIBUTE.finditer(text))
        if matches:
            m = rng.choice(matches)
            return text[:m.start(1)] + text[m.end(1):], f"string at {m.start(1)} emptied"
    if kind == "dimension":
        matches = list(DIMENSION.finditer(text))
        if matches:
            m = rng.choice(matches)
            dims = m.group(1).split("x")[:-1]
            index = rng.randrange(len(dims))
            dims[index] = rng.choice(["0", "1", "3", "2147483648", str(int(dims[index]) * 2)])
            new = "tensor<" + "x".join(dims) + "x"
            return text[:m.start()] + new + text[m.end():], f"dimension at {m.start()} -> {new}"
    if kind == "delete" and len(lines) > 2:
        index = rng.randrange(len(lines))
        return "\n".join(lines[:index] + lines[index + 1:]), f"line {index + 1} deleted"
    if kind == "duplicate" and lines:
        index = rng.randrange(len(lines))
        return "\n".join(lines[:index + 1] + lines[index:]), f"line {index + 1} duplicated"
    if kind == "swap" and len(lines) > 2:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
        return "\n".join(lines), f"lines {a + 1} and {b + 1} swapped"
    if kind == "truncate" and text:
        at = rng.randrange(len(text))
        return text[:at], f"cut at {at}"
    if text:
        at = rng.randrange(len(text))
        character = chr(rng.choice([0x22, 0x3C, 0x3E, 0x7B, 0x7D, 0x25, 0x3A, 0x78, 0x2D, 0x30]))
        return text[:at] + character + text[at + 1:], f"byte {at} -> {character!r}"
    return text, "unchanged"


def outcome(tool, mode, path, timeout, work):
    """Runs one mode on one file: (exit code, None if clean else what went wrong)."""
    output = os.path.join(work, "out.mlir")
    if os.path.exists(output):
        os.remove(output)
    command = [tool, path, *MODES[mode], "-o", output]
    try:
        result = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"hang (past {timeout} s)"
    code = result.returncode
    if code < 0 or code not in (0, 1, 2):
        return code, f"crash (exit {code}): {result.stderr.strip().splitlines()[-1:] or ''}"
    if "internal error" in result.stderr:
        line = next((l for l in result.stderr.splitlines() if "panicked at" in l), "internal error")
        return code, f"contained panic: {line.strip()}"
    if code != 0 and not result.stderr.strip():
        return code, "silent failure (no message)"
    if code != 0 and os.path.exists(output):
        return code, "failure left an output file"
    return code, None


def replay(args):
    """Runs each saved mutant in the mode its name ends with."""
    paths = sorted(glob.glob(os.path.join(args.replay, "*.mlir")))
    findings = 0
    with tempfile.TemporaryDirectory() as work:
        for path in paths:
            mode = pathlib.Path(path).stem.rsplit("-", 1)[-1]
            _, problem = outcome(args.tool, mode, path, args.timeout, work)
            if problem:
                findings += 1
                print(f"FINDING {os.path.basename(path)}: {problem}", flush=True)
    print(f"{len(paths)} regression inputs replayed: {findings} finding(s)")
    return 1 if findings else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100, help="mutants (with --minutes: at most)")
    parser.add_argument("--minutes", type=float, help="run for this long instead of --count mutants")
    parser.add_argument("--modes", default="parse,raise,tpu")
    parser.add_argument("--tool", default=str(ROOT / "target/release/flywheel-opt"))
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--save", default=str(ROOT / "fuzz/findings"))
    parser.add_argument("--only-seeds", help="a file-name glob selecting the seed programs")
    parser.add_argument("--keep", default="", help="mutant numbers to write to --save")
    parser.add_argument("--replay", help="run the saved NAME-MODE.mlir files of this directory")
    args = parser.parse_args()
    if args.replay:
        return replay(args)
    modes = args.modes.split(",")
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        parser.error(f"unknown modes {unknown} (known: {', '.join(MODES)})")
    files = seeds(args.only_seeds)
    texts = {path: pathlib.Path(path).read_text() for path in files}
    rng = random.Random(args.seed)
    deadline = time.time() + args.minutes * 60 if args.minutes else None
    findings, runs, mutants, accepted = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as work:
        while (deadline and time.time() < deadline) or (not deadline and mutants < args.count):
            source = rng.choice(files)
            text, done = texts[source], []
            for _ in range(rng.randint(1, 3)):
                text, what = mutate(text, rng)
                done.append(what)
            mutants += 1
            mode = modes[mutants % len(modes)]
            path = os.path.join(work, f"mutant{mutants}.mlir")
            pathlib.Path(path).write_text(text)
            code, problem = outcome(args.tool, mode, path, args.timeout, work)
            runs += 1
            accepted += code == 0
            if str(mutants) in args.keep.split(","):
                os.makedirs(args.save, exist_ok=True)
                pathlib.Path(args.save, f"{args.seed}-{mutants}-{mode}.mlir").write_text(text)
            if problem:
                name = f"{args.seed}-{mutants}-{mode}.mlir"
                os.makedirs(args.save, exist_ok=True)
                pathlib.Path(args.save, name).write_text(text)
                note = f"{problem} | mode {mode} | seed {os.path.relpath(source, ROOT)} | {'; '.join(done)}"
                pathlib.Path(args.save, name + ".txt").write_text(note + "\n")
                findings.append(note)
                print(f"FINDING {name}: {note}", flush=True)
            os.remove(path)
    print(f"{runs} runs of {mutants} mutants ({', '.join(modes)}; seed {args.seed}): {accepted} accepted, "
          f"{runs - accepted - len(findings)} clean errors, {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
