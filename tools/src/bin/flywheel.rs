//! `flywheel`: FlyWheel's PJRT front-end. Compiles StableHLO for TPU v5e/v6e/tpu7x with
//! the real TPU compiler (libtpu) without a TPU, and reads its static cycle estimates.
//!
//! Exit codes: 0 success, 1 the module or the compiler failed, 2 a usage, plugin or I/O
//! error. No output file is created on failure.

use clap::{Args, Parser, Subcommand};
use flywheel_dialect::create_context;
use flywheel_tools::{
    diagnostics::{render, Collector},
    output::write_atomically,
    source::parse_module,
    tpu::{locate_libtpu, read_profile, Target, TpuCompiler, TpuError},
};
use std::{path::PathBuf, process::ExitCode};

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
    },
}

#[derive(Args)]
struct TpuArgs {
    /// The TPU generation.
    #[arg(long, value_enum)]
    target: Target,
    /// A topology of the target, e.g. v6e:2x2 (default: one chip).
    #[arg(long)]
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

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Reported) => ExitCode::from(1),
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
    match cli.command {
        Command::Compile { tpu, output } => {
            let module = read_module(&tpu)?;
            let topology = topology(&tpu);
            let compiler = TpuCompiler::load(&locate_libtpu(tpu.libtpu.as_deref())?, None)?;
            let compiled = compiler.compile(&module, tpu.target, &topology)?;
            println!("compiled {} for {topology}", tpu.input.display());
            for (name, value) in &compiled.cost_analysis {
                println!("  {name:<24} {value}");
            }
            println!("  {:<24} {}", "executable bytes", compiled.serialized.len());
            if let Some(path) = output {
                write_atomically(&path, &compiled.serialized)
                    .map_err(|error| Failure::Usage(format!("cannot write '{path}': {error}")))?;
            }
            Ok(())
        }
        Command::Profile { tpu, json } => {
            let module = read_module(&tpu)?;
            let libtpu = locate_libtpu(tpu.libtpu.as_deref())?;
            let topology = topology(&tpu);
            let directory = std::env::temp_dir().join(format!("flywheel-profile-{}", std::process::id()));
            std::fs::create_dir_all(&directory)
                .map_err(|error| Failure::Usage(format!("cannot create {}: {error}", directory.display())))?;
            let profiled = TpuCompiler::load(&libtpu, Some(&directory))
                .and_then(|compiler| compiler.compile(&module, tpu.target, &topology))
                .and_then(|_| read_profile(&directory));
            let _ = std::fs::remove_dir_all(&directory);
            let estimates = profiled?;
            let total: u64 = estimates.iter().map(|estimate| estimate.cycles).sum();
            if json {
                let ops: Vec<String> = estimates
                    .iter()
                    .map(|e| format!("{{\"hlo_op\":{:?},\"cycles\":{}}}", e.hlo_op, e.cycles))
                    .collect();
                println!(
                    "{{\"input\":{:?},\"topology\":{:?},\"total_cycles\":{total},\"ops\":[{}]}}",
                    tpu.input.display().to_string(),
                    topology,
                    ops.join(",")
                );
            } else {
                println!("static cycles, {} on {topology} (libtpu's estimate, not measured time)", tpu.input.display());
                for estimate in &estimates {
                    println!("  {:<40} {:>12}", estimate.hlo_op, estimate.cycles);
                }
                println!("  {:<40} {:>12}", "total", total);
            }
            Ok(())
        }
    }
}

fn topology(tpu: &TpuArgs) -> String {
    tpu.topology.clone().unwrap_or_else(|| tpu.target.single_chip_topology().to_owned())
}

/// Reads the module and checks that MLIR parses it, so malformed input gets a located
/// error rather than a compiler crash.
fn read_module(tpu: &TpuArgs) -> Result<Vec<u8>, Failure> {
    let bytes = std::fs::read(&tpu.input)
        .map_err(|error| Failure::Usage(format!("cannot read '{}': {error}", tpu.input.display())))?;
    let context = create_context();
    let collector = Collector::attach(&context);
    if parse_module(&context, &bytes).is_none() {
        let source = String::from_utf8_lossy(&bytes);
        for reported in collector.take() {
            eprint!("{}", render(&reported, &tpu.input.display().to_string(), &source));
        }
        return Err(Failure::Reported);
    }
    Ok(bytes)
}
