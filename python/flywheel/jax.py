"""One call from a JAX function to its FlyWheel-optimized program.

    import flywheel.jax
    optimized = flywheel.jax.optimize(fn, *example_args, target="v6e")
    optimized.text                # the optimized StableHLO (generic form)
    optimized.kernels             # how many FlyWheel kernels it holds
    optimized.profile()           # libtpu static cycles before/after (deviceless)
    optimized.profile(topology="v6e:2x2")   # a program sharded over four chips, per chip
    optimized.check(seed=0)       # original vs optimized on the PJRT CPU plugin
    optimized.remarks             # what each pass did and did not do, and why

When the chain finds attention or Gated DeltaNet it leaves without a kernel, `optimize`
warns (a UserWarning) with the remarks that say why. An attention whose kernel would be
slower than XLA's ops on the target (short sequences) keeps them, with a remark and no
warning (`optimized.kept`); `profitability="off"` gives every attention its kernel.

    exported = jax.export.export(jax.jit(fn), platforms=["tpu"])(*example_args)
    faster, optimized = flywheel.jax.optimize_exported(exported, target="v6e")
    jax.export.deserialize(faster.serialize())   # the same calling convention

The Rust tools run as subprocesses: `flywheel-opt` and `flywheel` from $FLYWHEEL_OPT and
$FLYWHEEL, else the PATH, else the repository's target/release. Their diagnostics reach
Python as FlyWheelError with the tools' own text.
"""

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import warnings

import jax

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
TARGETS = ("v5e", "v6e", "tpu7x")


class FlyWheelError(RuntimeError):
    """A FlyWheel tool failed; the message is its diagnostic output."""


def tool(name):
    """The path of a FlyWheel binary, or FlyWheelError saying where it was looked for."""
    override = os.environ.get(name.upper().replace("-", "_"))
    found = override or shutil.which(name) or str(REPOSITORY / "target" / "release" / name)
    if not pathlib.Path(found).is_file():
        raise FlyWheelError(f"{name} not found (looked at ${name.upper().replace('-', '_')}, the PATH and {found}): "
                            "build it with `cargo build --release`")
    return found


def run(command, stdin=None, diagnostics=False):
    """A tool's output (with `diagnostics`, also its stderr), or FlyWheelError."""
    result = subprocess.run(command, input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise FlyWheelError(result.stderr.strip() or f"{command[0]} exited with {result.returncode}")
    return (result.stdout, result.stderr) if diagnostics else result.stdout


def stablehlo(fn, *example_args):
    """The StableHLO of `fn` lowered for TPU, in generic form (what FlyWheel reads)."""
    lowered = jax.jit(fn).trace(*example_args).lower(lowering_platforms=("tpu",))
    return lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


def pipeline(target, options):
    """`flywheel-tpu{target=... key=value ...}`; option names may use _ for -."""
    if target not in TARGETS:
        raise FlyWheelError(f"unknown target {target!r} (one of {', '.join(TARGETS)})")
    settings = [f"target={target}"]
    options = {"remarks": True, **options}
    for key, value in options.items():
        value = str(value).lower() if isinstance(value, bool) else value
        settings.append(f"{key.replace('_', '-')}={value}")
    return f"builtin.module(flywheel-tpu{{{' '.join(settings)}}})"


class Optimized:
    """A program before and after FlyWheel, both StableHLO text, and the remarks of the
    passes that made it."""

    def __init__(self, original, text, target, remarks=()):
        self.original = original
        self.text = text
        self.target = target
        self.remarks = list(remarks)

    @property
    def candidates(self):
        """How many attention and Gated DeltaNet ops the chain found, raised or not."""
        return sum(("raised to flywheel." in remark or " not raised: " in remark or KEPT in remark)
                   for remark in self.remarks)

    @property
    def kept(self):
        """The remarks on attention left as XLA's ops because its kernel would be slower."""
        return [remark for remark in self.remarks if KEPT in remark]

    @property
    def missed(self):
        """The remarks on what the chain found but left without a kernel, and why."""
        return [remark for remark in self.remarks if " not raised: " in remark or "kept for the reference" in remark]

    @property
    def kernels(self):
        return self.text.count('"tpu_custom_call"')

    def _files(self, directory):
        paths = []
        for name, text in (("original.mlir", self.original), ("optimized.mlir", self.text)):
            path = pathlib.Path(directory) / name
            path.write_text(text)
            paths.append(str(path))
        return paths

    def profile(self, target=None, topology=None):
        """libtpu's static cycles of the original and the optimized program (deviceless),
        per chip on `topology` (e.g. "v6e:2x2" for a program sharded over four chips;
        default one chip)."""
        target = target or self.target
        where = ["--topology", topology] if topology else []
        with tempfile.TemporaryDirectory() as directory:
            totals = {}
            for label, path in zip(("before", "after"), self._files(directory)):
                record = json.loads(run([tool("flywheel"), "profile", "--target", target, *where, "--json", path]))
                totals[label] = record["total_cycles"]
        return totals

    def check(self, seed=0):
        """Runs both programs on the PJRT CPU plugin (FlyWheel's kernels in its Mosaic
        interpreter) on the same seeded random inputs; the per-output comparison table,
        or FlyWheelError with it when an output differs beyond its dtype's tolerance and
        beyond twice the error the original has on a TPU (`flywheel check --reference
        tpu-bound`: a kernel may take DEFAULT-precision products in one bf16 pass, as the
        TPU does the original's)."""
        with tempfile.TemporaryDirectory() as directory:
            return run([tool("flywheel"), "check", *self._files(directory), "--seed", str(seed),
                        "--reference", "tpu-bound"])


def generic_form(text):
    """StableHLO text in MLIR's generic form, parsed and printed in JAX's MLIR context."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    with jax_mlir.make_ir_context():
        return ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)


# The remark flywheel-tpu makes on an attention its kernel would be slower for.
KEPT = "kept as XLA's ops"


def remarks_of(stderr):
    """The remark lines of a tool's diagnostics, without their file positions."""
    return [line.split("remark: ", 1)[1] for line in stderr.splitlines() if "remark: " in line]


def optimized(original, target, options):
    """Runs flywheel-tpu over `original`; warns when it leaves candidates without kernels."""
    text, stderr = run([tool("flywheel-opt"), "-", f"--pass-pipeline={pipeline(target, options)}"], stdin=original,
                       diagnostics=True)
    result = Optimized(original, text, target, remarks_of(stderr))
    if result.kernels + len(result.kept) < result.candidates:
        warnings.warn(f"FlyWheel made {result.kernels} kernel(s) of {result.candidates} candidate(s):\n  "
                      + "\n  ".join(result.missed), stacklevel=3)
    return result


def optimize_exported(exported, target="v6e", **options):
    """An `jax.export.Exported` whose module FlyWheel optimized, everything else (calling
    convention, avals, shardings, platforms) as it was, and the `Optimized` record. The
    module is re-serialized as jax.export does it (a StableHLO portable artifact; jax
    offers no public call for it, hence its private `_module_to_bytecode`)."""
    from jax._src.export import _export
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    result = optimized(generic_form(exported.mlir_module()), target, options)
    with jax_mlir.make_ir_context():
        serialized = _export._module_to_bytecode(ir.Module.parse(result.text))
    return dataclasses.replace(exported, mlir_module_serialized=serialized), result


def optimize(fn, *example_args, target="v6e", **options):
    """Lowers `fn` at `example_args` (arrays or jax.ShapeDtypeStruct) and runs FlyWheel's
    whole chain for `target` over it; `options` go to `flywheel-tpu` (e.g.
    auto_blocks=True)."""
    return optimized(stablehlo(fn, *example_args), target, options)
