//! A small lit: runs each `// RUN:` line of a test file through `bash -o pipefail`, with
//! `%s` (the file), `%S` (its directory), `%t` (one fresh temporary path per file) and
//! `%python` (the project venv's Python, with numpy and JAX) substituted,
//! and FlyWheel's tools (`flywheel-opt`, `flywheel`), `FileCheck` and `not` on the PATH.

use crate::{mlir_files, repository_root};
use libtest_mimic::{Failed, Trial};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

pub fn trials() -> Vec<Trial> {
    let root = repository_root();
    mlir_files(&root.join("test"))
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let commands = run_lines(&text);
            if commands.is_empty() {
                return None;
            }
            let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            Some(Trial::test(format!("lit::{name}"), move || run_file(&path, &commands)))
        })
        .collect()
}

/// The commands of a file's RUN lines, joining lines that end in `\`.
pub fn run_lines(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let Some(position) = line.find("RUN:") else { continue };
        if !line[..position].trim_start().starts_with("//") {
            continue;
        }
        let part = line[position + 4..].trim();
        match part.strip_suffix('\\') {
            Some(continued) => {
                pending.push_str(continued);
                pending.push(' ');
            }
            None => {
                pending.push_str(part);
                commands.push(std::mem::take(&mut pending));
            }
        }
    }
    commands
}

fn run_file(path: &Path, commands: &[String]) -> Result<(), Failed> {
    if !Path::new(LLVM_BIN).join("FileCheck").exists() {
        return Err(format!("FileCheck is missing from {LLVM_BIN}: run scripts/setup").into());
    }
    let temporary = tempdir(path);
    let tool_dir = Path::new(env!("CARGO_BIN_EXE_flywheel-opt")).parent().expect("binary directory").to_path_buf();
    let search_path = format!("{}:{LLVM_BIN}:{}", tool_dir.display(), std::env::var("PATH").unwrap_or_default());
    let directory = path.parent().expect("test file directory");
    for (index, command) in commands.iter().enumerate() {
        let command = command
            .replace("%python", &repository_root().join(".venv/bin/python").display().to_string())
            .replace("%s", &path.display().to_string())
            .replace("%S", &directory.display().to_string())
            .replace("%t", &temporary.join("t").display().to_string());
        let output = Command::new("bash")
            .args(["-o", "pipefail", "-c", &command])
            .current_dir(directory)
            .env("PATH", &search_path)
            .output()
            .map_err(|error| format!("cannot run bash: {error}"))?;
        if !output.status.success() {
            let _ = std::fs::remove_dir_all(&temporary);
            return Err(format!(
                "RUN line {} failed ({}):\n  {command}\n--- stdout ---\n{}--- stderr ---\n{}",
                index + 1,
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
    }
    let _ = std::fs::remove_dir_all(&temporary);
    Ok(())
}

/// A fresh directory for one test file's `%t` paths.
fn tempdir(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let directory = std::env::temp_dir().join(format!("flywheel-lit-{}-{stem}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("temporary directory");
    directory
}
