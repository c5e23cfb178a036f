//! `flywheel-opt`: an `mlir-opt`-compatible driver for FlyWheel's passes.
//!
//! Exit codes: 0 success, 1 a parse, verification or pass failure (or unmet
//! `--verify-diagnostics` expectations), 2 a usage or I/O error. On failure no output
//! file is created or replaced.

use clap::{CommandFactory, FromArgMatches, Parser};
use flywheel_dialect::{create_context, ir::print_operation, verify::verify};
use flywheel_passes::{pipelines::parse as pipeline, tile::block_search::Profiler};
use flywheel_tools::{
    diagnostics::{render, Collector, Kind},
    output::write_atomically,
    source::{is_bytecode, parse_module, split_chunks, SPLIT_MARKER},
    standard_streams::{ensure_open, Stream},
    tpu::locate_libtpu,
    verify_diagnostics::{check, parse_expectations},
};
use melior::{
    ir::{
        operation::{OperationLike, OperationPrintingFlags, WalkOrder, WalkResult},
        Module,
    },
    pass::PassManager,
    Context, StringRef,
};
use mlir_sys::{mlirPassManagerCreateOnOperation, mlirPassManagerEnableIRPrinting, mlirPassManagerEnableTiming};
use std::{io::Read, process::ExitCode};

/// Optimize MLIR with FlyWheel's passes (attention and Gated DeltaNet for TPU) and
/// upstream MLIR passes, like mlir-opt.
///
/// Every FlyWheel pass is also a flag: `--flywheel-verify`, `--NAME=key=value ...`.
/// Upstream passes are accepted the same way (`--canonicalize`, `--cse`).
#[derive(Parser, Debug)]
#[command(name = "flywheel-opt", version)]
struct Cli {
    /// Input file (text or bytecode); `-` reads standard input.
    #[arg(default_value = "-")]
    input: String,
    /// Output file; `-` writes standard output.
    #[arg(short = 'o', default_value = "-")]
    output: String,
    /// A pass pipeline, e.g. 'builtin.module(flywheel-verify,canonicalize)'.
    #[arg(long = "pass-pipeline")]
    pass_pipeline: Option<String>,
    /// Process each `// -----` separated chunk of the input on its own.
    #[arg(long = "split-input-file")]
    split_input_file: bool,
    /// Check reported diagnostics against `expected-*` comments in the input.
    #[arg(long = "verify-diagnostics")]
    verify_diagnostics: bool,
    /// Write MLIR bytecode instead of text.
    #[arg(long = "emit-bytecode")]
    emit_bytecode: bool,
    /// Print every op in generic form (the default when the output holds unregistered
    /// ops such as StableHLO, so that JAX and XLA can read it back).
    #[arg(long = "mlir-print-op-generic")]
    print_generic: bool,
    /// Print locations.
    #[arg(long = "mlir-print-debuginfo")]
    print_debuginfo: bool,
    /// Print the IR after every pass, to standard error.
    #[arg(long = "mlir-print-ir-after-all")]
    print_ir_after_all: bool,
    /// Report the time each pass takes, to standard error.
    #[arg(long = "mlir-timing")]
    timing: bool,
    /// Verify the IR after parsing and after every pass (MLIR's verifier and FlyWheel's
    /// semantic verifier); `--verify-each=false` leaves that to passes such as
    /// `flywheel-verify`.
    #[arg(long = "verify-each", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    verify_each: bool,
    /// List FlyWheel's passes with their options, and exit.
    #[arg(long = "list-passes")]
    list_passes: bool,
    /// Print the reference of FlyWheel's passes and pipelines (docs/passes.md) as
    /// Markdown, and exit.
    #[arg(long = "pass-docs")]
    pass_docs: bool,
}

/// Why the driver stops: a usage/IO problem (exit 2) or a failed run (exit 1).
enum Failure {
    Usage(String),
    Run,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Run) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            eprintln!("flywheel-opt: {message}");
            ExitCode::from(2)
        }
    }
}

/// Splits the command line into driver flags (for clap) and pass flags, in order.
fn split_arguments(arguments: Vec<String>) -> (Vec<String>, Vec<pipeline::Element>) {
    let command = Cli::command();
    let driver_flags: Vec<String> = command
        .get_arguments()
        .filter_map(|argument| argument.get_long().map(|long| format!("--{long}")))
        .chain(["--help".into(), "--version".into()])
        .collect();
    let mut driver = Vec::new();
    let mut pass_flags = Vec::new();
    for argument in arguments {
        let flag = argument.split('=').next().unwrap_or_default();
        if argument.starts_with("--") && argument.len() > 2 && !driver_flags.iter().any(|f| f == flag) {
            let (name, options) = argument[2..].split_once('=').unwrap_or((&argument[2..], ""));
            pass_flags.push(pipeline::Element::Pass { name: name.into(), options: options.into() });
        } else {
            driver.push(argument);
        }
    }
    (driver, pass_flags)
}

/// Static cycles of an attention candidate for `flywheel-tile{auto-blocks=true}`: this
/// binary runs `pipeline` on `program`, then the sibling `flywheel profile` compiles the
/// result with libtpu. Both are child processes, so a libtpu abort costs one candidate.
fn profile_candidate(program: &str, pipeline: &str, target: &str) -> Result<i64, String> {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let directory = std::env::temp_dir().join(format!("flywheel-blocks-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&directory).map_err(|e| e.to_string())?;
    let (source, lowered) = (directory.join("candidate.mlir"), directory.join("lowered.mlir"));
    let result = (|| {
        std::fs::write(&source, program).map_err(|e| e.to_string())?;
        let this = std::env::current_exe().map_err(|e| e.to_string())?;
        let output = std::process::Command::new(&this)
            .arg(&source)
            .arg(format!("--pass-pipeline={pipeline}"))
            .arg("-o")
            .arg(&lowered)
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        let flywheel = this.with_file_name("flywheel");
        let output = std::process::Command::new(&flywheel)
            .args(["profile", "--target", target, "--json"])
            .arg(&lowered)
            .output()
            .map_err(|e| format!("{}: {e}", flywheel.display()))?;
        let text = String::from_utf8_lossy(&output.stdout);
        let total = text
            .split("\"total_cycles\":")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        total.filter(|_| output.status.success()).ok_or_else(|| String::from_utf8_lossy(&output.stderr).into_owned())
    })();
    let _ = std::fs::remove_dir_all(&directory);
    result
}

/// The libtpu `flywheel profile` loads, by its path, size and modification time: another
/// install or version gets its own cached block decisions.
fn libtpu_identity() -> String {
    match locate_libtpu(None) {
        Ok(path) => {
            let metadata = std::fs::metadata(&path).ok();
            let modified = metadata.as_ref().and_then(|m| m.modified().ok());
            format!("{} ({:?} bytes, modified {modified:?})", path.display(), metadata.map(|m| m.len()))
        }
        Err(error) => error.to_string(),
    }
}

fn run() -> Result<(), Failure> {
    flywheel_passes::tile::block_search::set_profiler(Profiler {
        profile: profile_candidate,
        compiler: libtpu_identity,
    });
    let (driver_arguments, pass_flags) = split_arguments(std::env::args().collect());
    let command = Cli::command().after_long_help(flywheel_passes::registry::listing());
    let parsed = command.try_get_matches_from(driver_arguments).and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        // --help and --version: clap prints them (tolerating a closed pipe).
        Err(error) if !error.use_stderr() => {
            let _ = error.print();
            return Ok(());
        }
        Err(error) => return Err(Failure::Usage(error.to_string().trim_start_matches("error: ").trim().to_owned())),
    };
    if cli.list_passes || cli.pass_docs {
        use flywheel_passes::registry::{listing, markdown};
        print!("{}", if cli.pass_docs { markdown() } else { listing() });
        return Ok(());
    }
    if cli.pass_pipeline.is_some() && !pass_flags.is_empty() {
        return Err(Failure::Usage("'--pass-pipeline' cannot be used with individual pass flags".into()));
    }

    let input = read_input(&cli.input)?;
    let chunks: Vec<Vec<u8>> = if cli.split_input_file && !is_bytecode(&input) {
        split_chunks(&String::from_utf8_lossy(&input)).into_iter().map(String::into_bytes).collect()
    } else {
        vec![input]
    };

    let mut outputs = Vec::new();
    let mut failed = false;
    for chunk in &chunks {
        match process_chunk(&cli, &pass_flags, chunk)? {
            Some(output) => outputs.push(output),
            None => failed = true,
        }
    }
    if failed {
        return Err(Failure::Run);
    }
    let separator = format!("{SPLIT_MARKER}\n").into_bytes();
    let output = outputs.join(separator.as_slice());
    write_atomically(&cli.output, &output)
        .map_err(|error| Failure::Usage(format!("cannot write '{}': {error}", cli.output)))
}

fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    let result = if path == "-" {
        ensure_open(Stream::Stdin).and_then(|()| std::io::stdin().read_to_end(&mut bytes).map(|_| ()))
    } else {
        std::fs::read(path).map(|read| bytes = read)
    };
    result.map_err(|error| Failure::Usage(format!("cannot read '{path}': {error}")))?;
    Ok(bytes)
}

/// Parses, verifies, transforms and prints one chunk. `Ok(None)` means the chunk failed
/// (its diagnostics are already reported) or, under `--verify-diagnostics`, that its
/// diagnostics did not match the expectations.
fn process_chunk(cli: &Cli, pass_flags: &[pipeline::Element], chunk: &[u8]) -> Result<Option<Vec<u8>>, Failure> {
    let context = create_context();
    let collector = Collector::attach(&context);
    let transformed = transform(cli, pass_flags, &context, chunk)?;
    let reported = collector.take();
    // MLIR can fail without a diagnostic (its parser on a dialect op written in a custom
    // form the dialect has no parser for): say so rather than exit silently.
    let silent = match &transformed {
        Err(stage) if !reported.iter().any(|r| r.kind == Kind::Error) => Some(*stage),
        _ => None,
    };
    let output = transformed.ok();

    // The source is read only to quote lines in diagnostics.
    let source =
        if cli.verify_diagnostics || !reported.is_empty() { String::from_utf8_lossy(chunk) } else { "".into() };
    let file_name = if cli.input == "-" { "<stdin>" } else { cli.input.as_str() };
    let (problems, ok) = if cli.verify_diagnostics {
        let expectations =
            parse_expectations(&source).map_err(|message| Failure::Usage(format!("{file_name}: {message}")))?;
        let problems = check(&expectations, &reported);
        let ok = problems.is_empty();
        (problems, ok)
    } else {
        let ok = output.is_some() && !reported.iter().any(|r| r.kind == Kind::Error);
        (reported, ok)
    };
    for problem in &problems {
        eprint!("{}", render(problem, file_name, &source));
    }
    match silent.filter(|_| !cli.verify_diagnostics) {
        Some(Stage::Parse) => eprintln!(
            "{file_name}: error: the input does not parse, and MLIR says not why (a dialect op in a custom form? \
             FlyWheel's ops are written in generic form)"
        ),
        Some(Stage::Transform) => {
            eprintln!("{file_name}: error: verifying or transforming failed, and MLIR says not why")
        }
        None => {}
    }
    // Under --verify-diagnostics a failing pipeline is an expected outcome: print nothing
    // for the chunk, as mlir-opt does.
    Ok(ok.then(|| output.unwrap_or_default()))
}

/// Where a chunk failed.
#[derive(Clone, Copy)]
enum Stage {
    Parse,
    Transform,
}

/// Runs the chunk through parse, verification and the pipeline; the stage that failed.
fn transform(
    cli: &Cli,
    pass_flags: &[pipeline::Element],
    context: &Context,
    chunk: &[u8],
) -> Result<Result<Vec<u8>, Stage>, Failure> {
    let Some(mut module) = parse_module(context, chunk) else {
        return Ok(Err(Stage::Parse));
    };
    let semantically_valid = |module: &Module| !cli.verify_each || verify(module.as_operation());
    if !semantically_valid(&module) {
        return Ok(Err(Stage::Transform));
    }
    let manager = pass_manager(cli, pass_flags, context)?;
    if manager.run(&mut module).is_err() || !semantically_valid(&module) {
        return Ok(Err(Stage::Transform));
    }
    Ok(Ok(print_module(cli, context, &module)))
}

fn pass_manager<'c>(
    cli: &Cli,
    pass_flags: &[pipeline::Element],
    context: &'c Context,
) -> Result<PassManager<'c>, Failure> {
    let anchor = StringRef::new("builtin.module");
    let manager = unsafe { PassManager::from_raw(mlirPassManagerCreateOnOperation(context.to_raw(), anchor.to_raw())) };
    manager.enable_verifier(cli.verify_each);
    let added = match &cli.pass_pipeline {
        Some(text) => pipeline::add_module_pipeline(manager.as_operation_pass_manager(), text),
        None => pipeline::add_elements(manager.as_operation_pass_manager(), pass_flags),
    };
    added.map_err(Failure::Usage)?;
    if cli.print_ir_after_all {
        let flags = printing_flags(cli, true);
        unsafe {
            mlirPassManagerEnableIRPrinting(
                manager.to_raw(),
                false,
                true,
                true,
                false,
                false,
                flags.to_raw(),
                StringRef::new("").to_raw(),
            )
        };
    }
    if cli.timing {
        unsafe { mlirPassManagerEnableTiming(manager.to_raw()) };
    }
    Ok(manager)
}

fn printing_flags(cli: &Cli, generic: bool) -> OperationPrintingFlags {
    let flags = OperationPrintingFlags::new().enable_debug_info(cli.print_debuginfo, false);
    if generic {
        flags.print_generic_operation_form()
    } else {
        flags
    }
}

fn print_module(cli: &Cli, context: &Context, module: &Module) -> Vec<u8> {
    if cli.emit_bytecode {
        return module.as_operation().write_bytecode();
    }
    let generic = cli.print_generic || has_unregistered_ops(context, module);
    let mut text = print_operation(module.as_operation(), &printing_flags(cli, generic));
    if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text
}

/// Whether any op belongs to a dialect MLIR does not know (StableHLO, CHLO, Shardy).
fn has_unregistered_ops(context: &Context, module: &Module) -> bool {
    let mut found = false;
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name = op.name();
        let name = name.as_string_ref().as_str().unwrap_or_default();
        // IRDL ops (flywheel.*) are registered but print generically anyway.
        found = !name.starts_with("flywheel.") && !context.is_registered_operation(name);
        if found {
            WalkResult::Interrupt
        } else {
            WalkResult::Advance
        }
    });
    found
}
