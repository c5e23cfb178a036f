//! FlyWheel's integration suite, one binary (each links all of MLIR):
//! - `lit::<file>`: every `test/**/*.mlir` with `// RUN:` lines, run like LLVM's lit.
//! - `roundtrip::<fixture>`: every JAX fixture parses, verifies, prints and re-parses to
//!   the same text.
//! - `stablehlo::<name>`: the typed StableHLO views read real JAX output.
//! - `pjrt::<name>`: `flywheel run`/`check` on the PJRT CPU plugin against answers
//!   computed independently.
//! - `kernels::<config>`: emitted Mosaic kernels, interpreted, against the reference
//!   lowering on the CPU plugin.
//! - `gated_delta::<variant>::<case>`: the Gated DeltaNet kernel likewise, against the
//!   per-token recurrence.

mod gated_delta;
mod kernels;
mod lit;
mod pjrt;
mod roundtrip;
mod stablehlo_views;

use libtest_mimic::{Arguments, Trial};
use std::path::{Path, PathBuf};

pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tools/ sits in the repository").to_path_buf()
}

/// Every `.mlir` file under `directory`, sorted.
pub fn mlir_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("test directory is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "mlir") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn main() {
    let arguments = Arguments::from_args();
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(lit::trials());
    trials.extend(pjrt::trials());
    trials.extend(kernels::trials());
    trials.extend(gated_delta::trials());
    trials.extend(roundtrip::trials());
    trials.extend(stablehlo_views::trials());
    libtest_mimic::run(&arguments, trials).exit();
}
