//! `flywheel`: FlyWheel's PJRT front-end. Compiles StableHLO for TPU v5e/v6e/tpu7x with
//! the real TPU compiler (libtpu) without a TPU and reads its static cycle estimates; runs
//! programs on the PJRT CPU plugin and compares two programs' outputs.
//!
//! Exit codes: 0 success, 1 the module or the compiler failed (or `check` found a
//! mismatch), 2 a usage, plugin or I/O error. No output file is created on failure.

use clap::{Args, Parser, Subcommand};
use flywheel_dialect::{create_context, ir::print_operation};
use flywheel_kernels::array::{element_count, Array, Rng};
use flywheel_passes::lower::tpu_precision::emulate_tpu_precision;
use flywheel_tools::{
    compare::{compare, Comparison, Tolerance},
    cpu::{locate_cpu_plugin, CpuError, CpuRunner},
    diagnostics::{render, Collector},
    npy::{read_npz, write_npz},
    output::write_atomically,
    program::{self, entry_signature, Signature, TensorSpec},
    source::parse_module,
    standard_streams::{ensure_open, Stream},
    tpu::{locate_libtpu, read_profile, MemoryFigures, Target, TpuCompiler, TpuError},
};
use melior::ir::{operation::OperationPrintingFlags, Module};
use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

#[derive(Parser)]
#[command(name = "flywheel", version, about = "Compile and profile StableHLO for TPUs through PJRT, without a TPU")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Deviceless AOT compile through libtpu; prints libtpu's cost analysis.
    Compile {
        #[command(flatten)]
        tpu: TpuArgs,
        /// Where to write the serialized executable.
        #[arg(short = 'o')]
        output: Option<String>,
    },
    /// Compile with libtpu's static LLO profile and print estimated cycles per HLO op.
    Profile {
        #[command(flatten)]
        tpu: TpuArgs,
        /// Print one JSON record instead of a table.
        #[arg(long)]
        json: bool,
        /// The entry parameters' layouts: libtpu's defaults (relaid out where the program
        /// needs others, as a caller passing default-layout arrays pays), or chosen by the
        /// compiler (`mhlo.layout_mode = "auto"`, as JAX's Layout.AUTO: no relayout).
        #[arg(long, value_enum, default_value_t = ParameterLayouts::Default)]
        parameter_layouts: ParameterLayouts,
    },
    /// Run a program on the PJRT CPU plugin; print a summary of each output.
    Run {
        #[command(flatten)]
        cpu: CpuArgs,
        /// The StableHLO module (generic-form text or bytecode).
        input: PathBuf,
        /// Write the outputs to this .npz file (arr_0, arr_1, ... as np.savez names them).
        #[arg(long)]
        save: Option<String>,
    },
    /// Run two programs on the same inputs and compare their outputs (the first is the
    /// reference); exit 1 if any output is out of tolerance.
    Check {
        #[command(flatten)]
        cpu: CpuArgs,
        /// The reference program.
        reference: PathBuf,
        /// The program to check against it.
        candidate: PathBuf,
        /// Largest relative L2 error that passes (default by dtype: f32 1e-5, bf16 2e-2,
        /// f16 1e-3, f64 1e-12; integers and booleans exact).
        #[arg(long, value_parser = tolerance)]
        rtol: Option<f64>,
        /// An output also passes if its largest absolute error is at most this.
        #[arg(long, default_value_t = 0.0, value_parser = tolerance)]
        atol: f64,
        /// How the reference computes: `exact` as written (an f32 product in f32), or
        /// `tpu` as a TPU does (an f32 product at DEFAULT precision in one bf16 pass:
        /// flywheel-emulate-tpu-precision); `tpu-bound` compares against `exact` and also
        /// passes an output whose error is at most twice the TPU's own (`tpu`'s against
        /// `exact`): a candidate that takes DEFAULT products in one pass as the TPU does.
        #[arg(long = "reference", value_enum, default_value_t = ReferenceNumerics::Exact)]
        numerics: ReferenceNumerics,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReferenceNumerics {
    Exact,
    Tpu,
    TpuBound,
}

/// A tolerance: a finite number, zero or more (NaN would let every comparison pass).
fn tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("`{text}` is not a finite tolerance of zero or more")),
    }
}

#[derive(Args)]
struct CpuArgs {
    /// `cpu` (the CPU plugin from $FLYWHEEL_CPU_PLUGIN, else the project venv) or the path
    /// of a PJRT plugin.
    #[arg(long, default_value = "cpu")]
    plugin: String,
    /// `random` (seeded; floats standard normal, booleans fair, integers in [0, 16)) or an
    /// .npz file holding one array per parameter (arr_0, arr_1, ... or in archive order).
    #[arg(long, default_value = "random")]
    inputs: String,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ParameterLayouts {
    Default,
    Compiler,
}

#[derive(Args)]
struct TpuArgs {
    /// The TPU generation.
    #[arg(long, value_enum)]
    target: Target,
    /// A topology of the target, e.g. v6e:2x2 (default: one chip).
    #[arg(long, value_parser = topology_arg)]
    topology: Option<String>,
    /// libtpu.so (default: $FLYWHEEL_LIBTPU, else the project venv).
    #[arg(long)]
    libtpu: Option<PathBuf>,
    /// The StableHLO module (generic-form text or bytecode).
    input: PathBuf,
}

enum Failure {
    /// Already reported (located diagnostics).
    Reported,
    /// Already reported by a child; exit with this code.
    Silent(u8),
    Module(String),
    Usage(String),
}

impl From<TpuError> for Failure {
    fn from(error: TpuError) -> Self {
        match error {
            TpuError::Compile(_) => Failure::Module(error.to_string()),
            _ => Failure::Usage(error.to_string()),
        }
    }
}

impl From<CpuError> for Failure {
    fn from(error: CpuError) -> Self {
        match error {
            CpuError::Compile(_) | CpuError::Execute(_) => Failure::Module(error.to_string()),
            _ => Failure::Usage(error.to_string()),
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(1),
        Err(Failure::Silent(code)) => ExitCode::from(code),
        Err(Failure::Module(message)) => {
            eprintln!("flywheel: error: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(message)) => {
            eprintln!("flywheel: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    // Every command prints its report on stdout.
    ensure_open(Stream::Stdout)
        .map_err(|error| Failure::Usage(format!("cannot print the report on standard output: {error}")))?;
    match cli.command {
        Command::Compile { tpu, output } => {
            let (module, partitioning) = read_module(&tpu.input, program::partitioning)?;
            let topology = topology(&tpu);
            let compiler = TpuCompiler::load(&locate_libtpu(tpu.libtpu.as_deref())?, None)?;
            let compiled = compiler.compile(&module, tpu.target, &topology, partitioning)?;
            let spmd = if partitioning.partitions > 1 {
                format!(" as {} SPMD partitions", partitioning.partitions)
            } else {
                String::new()
            };
            println!("compiled {} for {topology}{spmd}", tpu.input.display());
            for (name, value) in &compiled.cost_analysis {
                println!("  {name:<24} {value}");
            }
            print_memory(&compiled.memory);
            println!("  {:<24} {}", "executable bytes", compiled.serialized.len());
            if let Some(path) = output {
                write_atomically(&path, &compiled.serialized)
                    .map_err(|error| Failure::Usage(format!("cannot write '{path}': {error}")))?;
            }
            Ok(())
        }
        Command::Profile { tpu, json, parameter_layouts } => {
            let compiler_layouts = parameter_layouts == ParameterLayouts::Compiler;
            let (bytes, (partitioning, relaid)) = read_module(&tpu.input, |module| {
                let relaid = compiler_layouts
                    .then(|| program::let_compiler_lay_out_parameters(module).map(|()| generic_text(module)));
                (program::partitioning(module), relaid)
            })?;
            let module = relaid.transpose().map_err(Failure::Module)?.unwrap_or(bytes);
            let libtpu = locate_libtpu(tpu.libtpu.as_deref())?;
            let topology = topology(&tpu);
            let directory = std::env::temp_dir().join(format!("flywheel-profile-{}", std::process::id()));
            std::fs::create_dir_all(&directory)
                .map_err(|error| Failure::Usage(format!("cannot create {}: {error}", directory.display())))?;
            // libtpu's static profiler can abort the process (a CHECK failure on some
            // programs): the compile runs in a child so that becomes an error line here.
            if let Some(worker_directory) = std::env::var_os(PROFILE_WORKER) {
                let compiler = TpuCompiler::load(&libtpu, Some(Path::new(&worker_directory)))?;
                compiler.compile(&module, tpu.target, &topology, partitioning)?;
                return Ok(());
            }
            let profiled = profile_in_child(&directory).and_then(|()| read_profile(&directory).map_err(Failure::from));
            let _ = std::fs::remove_dir_all(&directory);
            let estimates = profiled?;
            let total: u64 = estimates.iter().map(|estimate| estimate.cycles).sum();
            if json {
                let ops: Vec<String> = estimates
                    .iter()
                    .map(|e| format!("{{\"hlo_op\":{:?},\"cycles\":{}}}", e.hlo_op, e.cycles))
                    .collect();
                let layouts = if compiler_layouts { "compiler" } else { "default" };
                println!(
                    "{{\"input\":{:?},\"topology\":{:?},\"parameter_layouts\":{layouts:?},\"total_cycles\":{total},\"ops\":[{}]}}",
                    tpu.input.display().to_string(),
                    topology,
                    ops.join(",")
                );
            } else {
                let layouts = if compiler_layouts { ", parameter layouts chosen by the compiler" } else { "" };
                println!(
                    "static cycles, {} on {topology}{layouts} (libtpu's estimate, not measured time)",
                    tpu.input.display()
                );
                for estimate in &estimates {
                    println!("  {:<40} {:>12}", estimate.hlo_op, estimate.cycles);
                }
                println!("  {:<40} {:>12}", "total", total);
            }
            Ok(())
        }
        Command::Run { cpu, input, save } => {
            let program = read_cpu_program(&input)?;
            let inputs = inputs(&cpu, &program)?;
            let outputs = load_runner(&cpu)?.run(&program.module, &inputs)?;
            println!("ran {} on the CPU plugin ({})", input.display(), inputs_description(&cpu));
            for (index, output) in outputs.iter().enumerate() {
                print_summary(index, output);
            }
            if let Some(path) = save {
                let named: Vec<(String, Array)> =
                    outputs.into_iter().enumerate().map(|(index, output)| (format!("arr_{index}"), output)).collect();
                let bytes =
                    write_npz(&named).map_err(|error| Failure::Usage(format!("cannot encode '{path}': {error}")))?;
                write_atomically(&path, &bytes)
                    .map_err(|error| Failure::Usage(format!("cannot write '{path}': {error}")))?;
            }
            Ok(())
        }
        Command::Check { cpu, reference, candidate, rtol, atol, numerics } => {
            let as_on_tpu = match numerics {
                ReferenceNumerics::TpuBound => Some(read_tpu_faithful_program(&reference)?),
                _ => None,
            };
            let reference = match numerics {
                ReferenceNumerics::Exact | ReferenceNumerics::TpuBound => read_cpu_program(&reference)?,
                ReferenceNumerics::Tpu => read_tpu_faithful_program(&reference)?,
            };
            let candidate = read_cpu_program(&candidate)?;
            if reference.signature.parameters != candidate.signature.parameters {
                return Err(Failure::Usage(format!(
                    "{} and {} take different parameters: ({}) vs ({})",
                    reference.path.display(),
                    candidate.path.display(),
                    types_text(&reference.signature.parameters),
                    types_text(&candidate.signature.parameters)
                )));
            }
            let inputs = inputs(&cpu, &reference)?;
            let runner = load_runner(&cpu)?;
            let expected = runner.run(&reference.module, &inputs)?;
            let actual = runner.run(&candidate.module, &inputs)?;
            let tpu_outputs = as_on_tpu.map(|program| runner.run(&program.module, &inputs)).transpose()?;
            println!(
                "check {} against {} on the CPU plugin ({})",
                candidate.path.display(),
                reference.path.display(),
                inputs_description(&cpu)
            );
            if expected.len() != actual.len() {
                return Err(Failure::Module(format!(
                    "{} returns {} outputs, the reference {}",
                    candidate.path.display(),
                    actual.len(),
                    expected.len()
                )));
            }
            println!(
                "  {:<6} {:<28} {:>10} {:>10} {:>10} {:>11} {:>11} {:>8}  result",
                "output", "type", "max abs", "max rel", "rel L2", "NaN/Inf ref", "NaN/Inf new", "rtol"
            );
            let mut failures = Vec::new();
            for (index, (expected, actual)) in expected.iter().zip(&actual).enumerate() {
                let tolerance = Tolerance { rtol: rtol.unwrap_or(Tolerance::for_dtype(expected.dtype).rtol), atol };
                let mut comparison = compare(expected, actual, tolerance);
                // Within twice the TPU's own error of the exact outputs passes too, where
                // every value is finite.
                let tpu_error = tpu_outputs.as_ref().map(|outputs| compare(expected, &outputs[index], tolerance));
                let finite = |c: &Comparison| c.reference_nonfinite.none() && c.candidate_nonfinite.none();
                let mut bound = None;
                if let (Some(_), Some(tpu)) = (&comparison.failure, &tpu_error) {
                    if finite(&comparison) && finite(tpu) && comparison.rel_l2 <= 2.0 * tpu.rel_l2 {
                        bound = Some(tpu.rel_l2);
                        comparison.failure = None;
                    }
                }
                println!(
                    "  {index:<6} {:<28} {:>10.3e} {:>10.3e} {:>10.3e} {:>11} {:>11} {:>8e}  {}",
                    expected.type_text(),
                    comparison.max_abs,
                    comparison.max_rel,
                    comparison.rel_l2,
                    format!("{}/{}", comparison.reference_nonfinite.nan, comparison.reference_nonfinite.inf),
                    format!("{}/{}", comparison.candidate_nonfinite.nan, comparison.candidate_nonfinite.inf),
                    tolerance.rtol,
                    match (&comparison.failure, bound) {
                        (Some(_), _) => "FAIL".to_owned(),
                        (None, Some(tpu)) => format!("ok (the TPU's own rel L2 {tpu:.3e})"),
                        (None, None) => "ok".to_owned(),
                    }
                );
                if let Some(failure) = comparison.failure {
                    failures.push(format!("output {index}: {failure}"));
                }
            }
            if failures.is_empty() {
                println!("check: passed ({} outputs within tolerance)", actual.len());
                Ok(())
            } else {
                Err(Failure::Module(format!("check failed: {}", failures.join("; "))))
            }
        }
    }
}

fn types_text(specs: &[TensorSpec]) -> String {
    specs.iter().map(TensorSpec::type_text).collect::<Vec<_>>().join(", ")
}

/// Set in the child `flywheel profile` runs the compile in: the profile directory.
const PROFILE_WORKER: &str = "FLYWHEEL_PROFILE_WORKER_DIR";

/// Runs this same command as a child that compiles with the profile written to
/// `directory`; its stderr is passed on, and an abort inside libtpu becomes an error.
fn profile_in_child(directory: &Path) -> Result<(), Failure> {
    let executable =
        std::env::current_exe().map_err(|error| Failure::Usage(format!("cannot find flywheel itself: {error}")))?;
    let output = std::process::Command::new(executable)
        .args(std::env::args_os().skip(1))
        .env(PROFILE_WORKER, directory)
        .output()
        .map_err(|error| Failure::Usage(format!("cannot run the profiling compile: {error}")))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => {
            eprint!("{stderr}");
            Ok(())
        }
        // The child reported its own error line: pass it on with its exit code.
        Some(code @ (1 | 2)) => {
            eprint!("{stderr}");
            Err(if code == 1 { Failure::Reported } else { Failure::Silent(2) })
        }
        _ => {
            let reason = stderr
                .lines()
                .find_map(|line| {
                    line.split_once("] ")
                        .filter(|(head, _)| head.starts_with('F'))
                        .map(|(_, message)| message.to_owned())
                })
                .unwrap_or_else(|| format!("the compile ended with {}", output.status));
            Err(Failure::Module(format!("libtpu aborted while profiling: {reason}")))
        }
    }
}

/// A topology `name:AxB` or `name:AxBxC`, every extent a whole number of one or more (a
/// zero extent made libtpu divide by zero).
fn topology_arg(text: &str) -> Result<String, String> {
    let extents = text.split_once(':').map(|(_, extents)| extents).unwrap_or_default();
    let valid = extents.split('x').all(|extent| extent.parse::<u32>().is_ok_and(|n| n >= 1))
        && (2..=3).contains(&extents.split('x').count());
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!("`{text}` is not a topology NAME:AxB or NAME:AxBxC with extents of 1 or more"))
    }
}

fn topology(tpu: &TpuArgs) -> String {
    tpu.topology.clone().unwrap_or_else(|| tpu.target.single_chip_topology().to_owned())
}

fn print_memory(memory: &MemoryFigures) {
    for (name, bytes) in [
        ("memory: arguments", memory.arguments),
        ("memory: outputs", memory.outputs),
        ("memory: aliased", memory.aliased),
        ("memory: temporaries", memory.temporaries),
        ("memory: code", memory.code),
        ("memory: peak", memory.peak),
    ] {
        println!("  {name:<24} {bytes}");
    }
}

/// A program ready to run on the CPU plugin.
struct CpuProgram {
    path: PathBuf,
    module: Vec<u8>,
    signature: Signature,
}

fn read_cpu_program(path: &Path) -> Result<CpuProgram, Failure> {
    let (module, signature) = read_module(path, entry_signature)?;
    let signature = signature.map_err(|message| Failure::Module(format!("{}: {message}", path.display())))?;
    Ok(CpuProgram { path: path.to_path_buf(), module, signature })
}

/// The program at `path` with its DEFAULT-precision f32 products rounded as a TPU's MXU
/// rounds them (flywheel-emulate-tpu-precision).
fn read_tpu_faithful_program(path: &Path) -> Result<CpuProgram, Failure> {
    let (_, (signature, rewritten)) = read_module(path, |module| {
        let rewritten = emulate_tpu_precision(module.as_operation()).then(|| generic_text(module));
        (entry_signature(module), rewritten)
    })?;
    let signature = signature.map_err(|message| Failure::Module(format!("{}: {message}", path.display())))?;
    let module =
        rewritten.ok_or_else(|| Failure::Module(format!("{}: cannot emulate the TPU's precision", path.display())))?;
    Ok(CpuProgram { path: path.to_path_buf(), module, signature })
}

/// `module` printed in generic form, as the plugins read it.
fn generic_text(module: &Module) -> Vec<u8> {
    print_operation(module.as_operation(), &OperationPrintingFlags::new().print_generic_operation_form())
}

fn load_runner(cpu: &CpuArgs) -> Result<CpuRunner, Failure> {
    let explicit = (cpu.plugin != "cpu").then(|| Path::new(&cpu.plugin));
    Ok(CpuRunner::load(&locate_cpu_plugin(explicit)?)?)
}

/// The inputs `--inputs` names, checked against the program's parameters.
/// The largest input `run` and `check` make or read (64 GiB).
const MAX_INPUT_BYTES: usize = 1 << 36;

fn inputs(cpu: &CpuArgs, program: &CpuProgram) -> Result<Vec<Array>, Failure> {
    let parameters = &program.signature.parameters;
    // Inputs are made in memory: refuse what no machine holds before allocating it.
    for (index, parameter) in parameters.iter().enumerate() {
        let bytes = element_count(&parameter.dims).saturating_mul(parameter.dtype.size());
        if bytes > MAX_INPUT_BYTES {
            return Err(Failure::Module(format!(
                "{}: parameter {index} is {}, too large to run on the CPU",
                program.path.display(),
                parameter.type_text()
            )));
        }
    }
    if cpu.inputs == "random" {
        let mut rng = Rng::new(cpu.seed);
        return Ok(parameters.iter().map(|p| Array::random(p.dtype, p.dims.clone(), &mut rng)).collect());
    }
    let bytes =
        std::fs::read(&cpu.inputs).map_err(|error| Failure::Usage(format!("cannot read '{}': {error}", cpu.inputs)))?;
    let mut arrays = read_npz(&bytes).map_err(|error| Failure::Usage(format!("{}: {error}", cpu.inputs)))?;
    // np.savez(f, *arrays) names them arr_0, arr_1, ...; otherwise take archive order.
    let positional: Option<Vec<usize>> =
        (0..arrays.len()).map(|i| arrays.iter().position(|(name, _)| *name == format!("arr_{i}"))).collect();
    if let Some(order) = positional {
        arrays = order.into_iter().map(|i| arrays[i].clone()).collect();
    }
    if arrays.len() != parameters.len() {
        return Err(Failure::Usage(format!(
            "{} holds {} arrays but {} takes {} parameters",
            cpu.inputs,
            arrays.len(),
            program.path.display(),
            parameters.len()
        )));
    }
    arrays
        .into_iter()
        .zip(parameters)
        .enumerate()
        .map(|(index, ((name, array), parameter))| {
            if (array.dtype, &array.dims) == (parameter.dtype, &parameter.dims) {
                Ok(array)
            } else {
                Err(Failure::Usage(format!(
                    "{}: '{name}' is {} but parameter {index} of {} is {}",
                    cpu.inputs,
                    array.type_text(),
                    program.path.display(),
                    parameter.type_text()
                )))
            }
        })
        .collect()
}

fn inputs_description(cpu: &CpuArgs) -> String {
    if cpu.inputs == "random" {
        format!("random inputs, seed {}", cpu.seed)
    } else {
        format!("inputs from {}", cpu.inputs)
    }
}

fn print_summary(index: usize, output: &Array) {
    let values = output.values();
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let sum: f64 = finite.iter().sum();
    let mean = if finite.is_empty() { 0.0 } else { sum / finite.len() as f64 };
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let l2 = finite.iter().map(|v| v * v).sum::<f64>().sqrt();
    let nan = values.iter().filter(|v| v.is_nan()).count();
    let inf = values.iter().filter(|v| v.is_infinite()).count();
    let statistics = if finite.is_empty() {
        "no finite elements".to_owned()
    } else {
        format!("mean {mean:.6e}  min {min:.6e}  max {max:.6e}  l2 {l2:.6e}")
    };
    println!(
        "  output {index}  {}  checksum {:016x}  {statistics}  nan {nan}  inf {inf}",
        output.type_text(),
        output.checksum()
    );
}
/// Reads a module, checking that MLIR parses it (so malformed input gets a located error
/// rather than a compiler crash), and reads what `inspect` wants to know about it.
fn read_module<T>(path: &Path, inspect: impl FnOnce(&Module) -> T) -> Result<(Vec<u8>, T), Failure> {
    let bytes =
        std::fs::read(path).map_err(|error| Failure::Usage(format!("cannot read '{}': {error}", path.display())))?;
    let context = create_context();
    let collector = Collector::attach(&context);
    let Some(module) = parse_module(&context, &bytes) else {
        let source = String::from_utf8_lossy(&bytes);
        for reported in collector.take() {
            eprint!("{}", render(&reported, &path.display().to_string(), &source));
        }
        return Err(Failure::Reported);
    };
    let facts = inspect(&module);
    // What inspecting reported (a rewrite's errors, at their ops).
    let source = String::from_utf8_lossy(&bytes);
    for reported in collector.take() {
        eprint!("{}", render(&reported, &path.display().to_string(), &source));
    }
    Ok((bytes, facts))
}
