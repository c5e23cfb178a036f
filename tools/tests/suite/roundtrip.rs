//! Every JAX fixture parses, passes both verifiers, prints (generic form, with locations)
//! and re-parses to exactly the same text.

use crate::{mlir_files, repository_root};
use flywheel_dialect::{create_context, verify::verify};
use flywheel_tools::source::parse_module;
use libtest_mimic::{Failed, Trial};
use melior::ir::operation::{OperationLike, OperationPrintingFlags};
use std::path::Path;

pub fn trials() -> Vec<Trial> {
    mlir_files(&repository_root().join("test/fixtures"))
        .into_iter()
        .map(|path| {
            let name = path.file_stem().expect("file name").to_string_lossy().into_owned();
            Trial::test(format!("roundtrip::{name}"), move || round_trip(&path))
        })
        .collect()
}

fn print(text: &[u8]) -> Result<String, Failed> {
    let context = create_context();
    let module = parse_module(&context, text).ok_or("does not parse")?;
    if !module.as_operation().verify() || !verify(module.as_operation()) {
        return Err("does not verify".into());
    }
    let flags = OperationPrintingFlags::new().enable_debug_info(true, false).print_generic_operation_form();
    Ok(module.as_operation().to_string_with_flags(flags)?)
}

fn round_trip(path: &Path) -> Result<(), Failed> {
    let first = print(&std::fs::read(path)?)?;
    let second = print(first.as_bytes())?;
    if first != second {
        return Err("printing the re-parsed module gives different text".into());
    }
    if !first.contains("stablehlo.") {
        return Err("the fixture holds no StableHLO".into());
    }
    Ok(())
}
