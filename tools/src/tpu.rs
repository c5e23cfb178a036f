//! Compiling for TPUs without one: libtpu through PJRT, "deviceless" (a topology
//! description and `PJRT_Compile` with no client), and reading libtpu's static cycle
//! profile (`--xla_jf_dump_static_llo_profile_to`, see docs/design.md).

use crate::plugin::{mlir_program, Plugin};
use crate::program::Partitioning;
use pjrt::{CompileOptions, Executable, TopologyDescription};
use pjrt_sys::{
    PJRT_Api, PJRT_Compile_Args, PJRT_Error, PJRT_Executable_GetCompiledMemoryStats_Args,
    PJRT_TopologyDescription_Create_Args, PJRT_TopologyDescription_GetDeviceDescriptions_Args,
};
use std::{
    fmt,
    path::{Path, PathBuf},
};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TpuError {
    #[error("libtpu not found at {0} (run scripts/setup, or set FLYWHEEL_LIBTPU / --libtpu)")]
    PluginMissing(PathBuf),
    #[error("cannot load libtpu from {path}: {message}")]
    PluginLoad { path: PathBuf, message: String },
    #[error("topology '{topology}' does not belong to target {target} (expected '{target}:...')")]
    TopologyMismatch { topology: String, target: Target },
    #[error("libtpu rejected topology '{topology}': {message}")]
    Topology { topology: String, message: String },
    #[error("the module is partitioned over {needed} devices but topology '{topology}' has {devices}")]
    TooFewDevices { topology: String, devices: usize, needed: i64 },
    #[error("libtpu could not compile the module: {0}")]
    Compile(String),
    #[error("cannot read the static profile in {path}: {message}")]
    Profile { path: PathBuf, message: String },
}

/// A TPU generation FlyWheel compiles for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    V5e,
    V6e,
    /// Ironwood (TPU v7x); libtpu names it `tpu7x`.
    Tpu7x,
}

impl Target {
    /// libtpu's topology prefix for the target.
    pub fn name(self) -> &'static str {
        match self {
            Target::V5e => "v5e",
            Target::V6e => "v6e",
            Target::Tpu7x => "tpu7x",
        }
    }

    /// One chip.
    pub fn single_chip_topology(self) -> &'static str {
        match self {
            Target::V5e => "v5e:1x1",
            Target::V6e => "v6e:1x1",
            Target::Tpu7x => "tpu7x:1x1x1",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where libtpu is: the explicit path, else `$FLYWHEEL_LIBTPU`, else the project venv.
pub fn locate_libtpu(explicit: Option<&Path>) -> Result<PathBuf, TpuError> {
    let path = match (explicit, std::env::var_os("FLYWHEEL_LIBTPU")) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(path)) => PathBuf::from(path),
        (None, None) => venv_site_packages().join("libtpu/libtpu.so"),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(TpuError::PluginMissing(path))
    }
}

/// The project venv's site-packages (`.venv/lib/python3.X/site-packages`).
pub fn venv_site_packages() -> PathBuf {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    std::fs::read_dir(&lib)
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("python3")))
        })
        .unwrap_or_else(|| lib.join("python3"))
        .join("site-packages")
}

/// A loaded libtpu, ready to compile.
pub struct TpuCompiler {
    plugin: Plugin,
}

/// What a compile produced.
pub struct Compiled {
    /// libtpu's cost analysis (flops, transcendentals, bytes accessed, optimal_seconds...).
    pub cost_analysis: Vec<(String, f64)>,
    pub memory: MemoryFigures,
    pub serialized: Vec<u8>,
}

/// libtpu's memory plan for one device (bytes of HBM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryFigures {
    pub code: i64,
    pub arguments: i64,
    pub outputs: i64,
    /// Bytes of arguments reused for outputs.
    pub aliased: i64,
    pub temporaries: i64,
    pub peak: i64,
}

/// `PJRT_Executable_GetCompiledMemoryStats_Args` as libtpu 0.0.50.1 (PJRT C API 0.116)
/// lays it out: the pjrt crate's older struct plus the trailing peak-memory field.
#[repr(C)]
#[derive(Clone, Copy)]
struct MemoryStatsArgs {
    base: PJRT_Executable_GetCompiledMemoryStats_Args,
    peak_memory_in_bytes: i64,
}

impl TpuCompiler {
    /// Loads libtpu. With `profile_dir`, libtpu writes its static cycle estimates there.
    /// libtpu reads its flags once, when loaded, so this sets them first; the host-probing
    /// variables keep it from looking for TPU hardware, and since a deviceless compile
    /// claims no device, several processes may load libtpu at once.
    pub fn load(libtpu: &Path, profile_dir: Option<&Path>) -> Result<Self, TpuError> {
        for (name, value) in [
            ("TPU_SKIP_MDS_QUERY", "1"),
            ("TPU_WORKER_HOSTNAMES", "localhost"),
            ("TPU_WORKER_ID", "0"),
            ("TPU_ACCELERATOR_TYPE", "v6e-1"),
            ("ALLOW_MULTIPLE_LIBTPU_LOAD", "1"),
        ] {
            if std::env::var_os(name).is_none() {
                std::env::set_var(name, value);
            }
        }
        // libtpu 0.0.51 remaps the process's text onto huge pages when loaded and, as this
        // binary's text is not aligned for it, logs an error line on every load.
        let mut flags = vec!["--hugepage_text=false".to_owned()];
        if let Some(directory) = profile_dir {
            flags.push(format!("--xla_jf_dump_static_llo_profile_to={}", directory.display()));
        }
        let existing = std::env::var("LIBTPU_INIT_ARGS").unwrap_or_default();
        std::env::set_var("LIBTPU_INIT_ARGS", format!("{existing} {}", flags.join(" ")).trim());
        let plugin =
            Plugin::load(libtpu).map_err(|message| TpuError::PluginLoad { path: libtpu.to_path_buf(), message })?;
        Ok(TpuCompiler { plugin })
    }

    /// Compiles a StableHLO module (text or bytecode) for `topology` of `target`, SPMD
    /// partitioned as the module says. Deviceless: `PJRT_Compile` gets a topology
    /// description and no client.
    pub fn compile(
        &self,
        module: &[u8],
        target: Target,
        topology: &str,
        partitioning: Partitioning,
    ) -> Result<Compiled, TpuError> {
        if topology.split(':').next() != Some(target.name()) {
            return Err(TpuError::TopologyMismatch { topology: topology.into(), target });
        }
        let mut args = PJRT_TopologyDescription_Create_Args::new();
        args.topology_name = topology.as_ptr().cast();
        args.topology_name_size = topology.len();
        unsafe { self.plugin.call(|api| api.PJRT_TopologyDescription_Create, &mut args) }
            .map_err(|message| TpuError::Topology { topology: topology.into(), message })?;
        let raw_topology = args.topology;
        // Owns the topology: destroys it when the compile is done.
        let _description = TopologyDescription::wrap(&self.plugin.api, raw_topology);
        let mut args = PJRT_TopologyDescription_GetDeviceDescriptions_Args::new();
        args.topology = raw_topology;
        unsafe { self.plugin.call(|api| api.PJRT_TopologyDescription_GetDeviceDescriptions, &mut args) }
            .map_err(|message| TpuError::Topology { topology: topology.into(), message })?;
        let needed = partitioning.replicas * partitioning.partitions;
        if needed > args.num_descriptions as i64 {
            return Err(TpuError::TooFewDevices { topology: topology.into(), devices: args.num_descriptions, needed });
        }

        let program = mlir_program(module);
        let options = compile_options(partitioning).encode();
        let mut args = PJRT_Compile_Args::new();
        args.topology = raw_topology;
        args.program = &program;
        args.compile_options = options.as_ptr().cast();
        args.compile_options_size = options.len();
        unsafe { self.plugin.call(|api| api.PJRT_Compile, &mut args) }.map_err(TpuError::Compile)?;
        let executable = Executable::wrap(&self.plugin.api, args.executable);

        let mut stats =
            MemoryStatsArgs { base: PJRT_Executable_GetCompiledMemoryStats_Args::new(), peak_memory_in_bytes: 0 };
        stats.base.executable = args.executable;
        // SAFETY: the function reads and writes a prefix of `MemoryStatsArgs`.
        let get_stats = |api: &PJRT_Api| unsafe {
            std::mem::transmute::<_, Option<unsafe extern "C" fn(*mut MemoryStatsArgs) -> *mut PJRT_Error>>(
                api.PJRT_Executable_GetCompiledMemoryStats,
            )
        };
        unsafe { self.plugin.call(get_stats, &mut stats) }.map_err(TpuError::Compile)?;
        let memory = MemoryFigures {
            code: stats.base.generated_code_size_in_bytes,
            arguments: stats.base.argument_size_in_bytes,
            outputs: stats.base.output_size_in_bytes,
            aliased: stats.base.alias_size_in_bytes,
            temporaries: stats.base.temp_size_in_bytes,
            peak: stats.peak_memory_in_bytes,
        };
        let mut cost_analysis: Vec<(String, f64)> = executable
            .cost_analysis()
            .into_vec()
            .into_iter()
            .filter_map(|named| number(&format!("{:?}", named.value)).map(|value| (named.name, value)))
            .collect();
        cost_analysis.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Compiled { cost_analysis, memory, serialized: executable.serialize().bytes().to_vec() })
    }
}

pub fn compile_options(partitioning: Partitioning) -> CompileOptions {
    let mut options = CompileOptions::new();
    if let Some(build) = options.proto_mut().executable_build_options.as_mut() {
        build.num_replicas = partitioning.replicas;
        build.num_partitions = partitioning.partitions;
        build.use_spmd_partitioning = partitioning.partitions > 1;
        build.use_shardy_partitioner = partitioning.shardy;
    }
    options
}

/// The number in a named value's `Debug` text (`F32(1.5)`, `I64(7)`): the pjrt crate
/// does not export its value type, so it cannot be matched directly.
fn number(debug: &str) -> Option<f64> {
    let inner = debug.strip_prefix("F32(").or_else(|| debug.strip_prefix("I64("))?;
    inner.strip_suffix(')')?.parse().ok()
}

/// The message of a PJRT error, without the backtrace the crate attaches.
pub fn pjrt_message(error: &pjrt::Error) -> String {
    match error {
        pjrt::Error::PjrtError { msg, .. } => msg.clone(),
        other => other.to_string(),
    }
}

/// One HLO op's static cycle estimate (for a record standing for several identical ops,
/// their sum).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpEstimate {
    pub hlo_op: String,
    pub cycles: u64,
}

/// Reads every `hlo_op_estimate { hlo_op_name: ... estimated_cycles: N }` record libtpu
/// wrote to `directory`, sorted by op name.
pub fn read_profile(directory: &Path) -> Result<Vec<OpEstimate>, TpuError> {
    let failure = |message: String| TpuError::Profile { path: directory.to_path_buf(), message };
    let mut estimates = Vec::new();
    for entry in std::fs::read_dir(directory).map_err(|error| failure(error.to_string()))? {
        let path = entry.map_err(|error| failure(error.to_string()))?.path();
        let text = std::fs::read_to_string(&path).map_err(|error| failure(error.to_string()))?;
        estimates.extend(parse_profile(&text).map_err(failure)?);
    }
    estimates.sort_by(|a, b| a.hlo_op.cmp(&b.hlo_op));
    Ok(estimates)
}

/// Parses the text-proto records of one profile file.
pub fn parse_profile(text: &str) -> Result<Vec<OpEstimate>, String> {
    let mut estimates = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(value) = line.strip_prefix("hlo_op_name:") {
            name = Some(value.trim().trim_matches('"').to_owned());
        } else if let Some(value) = line.strip_prefix("estimated_cycles:") {
            let cycles = value.trim().parse().map_err(|_| format!("bad cycle count '{}'", value.trim()))?;
            let hlo_op = name.take().ok_or("estimated_cycles before hlo_op_name")?;
            estimates.push(OpEstimate { hlo_op, cycles });
        } else if let Some(value) = line.strip_prefix("num_equivalent_hlos:") {
            // One record stands for this many identical ops, each taking its cycles.
            let count: u64 = value.trim().parse().map_err(|_| format!("bad op count '{}'", value.trim()))?;
            estimates.last_mut().ok_or("num_equivalent_hlos before estimated_cycles")?.cycles *= count;
        }
    }
    Ok(estimates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_profile_records() {
        // A record standing for three identical fusions counts three times.
        let text = "hlo_op_estimate {\n  hlo_op_name: \"fusion.3\"\n  estimated_cycles: 487\n  num_equivalent_hlos: 3\n}\nhlo_op_estimate {\n  hlo_op_name: \"tpu_custom_call\"\n  estimated_cycles: 12\n}\n";
        assert_eq!(
            parse_profile(text).unwrap(),
            vec![
                OpEstimate { hlo_op: "fusion.3".into(), cycles: 1461 },
                OpEstimate { hlo_op: "tpu_custom_call".into(), cycles: 12 }
            ]
        );
        assert!(parse_profile("num_equivalent_hlos: 2").is_err());
        assert!(parse_profile("estimated_cycles: 5").is_err());
        assert!(parse_profile("hlo_op_name: \"x\"\nestimated_cycles: many").is_err());
    }
}
