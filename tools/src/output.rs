//! Writing results so that a failed run leaves no partial or truncated file behind.

use std::{
    fs,
    io::{self, Write},
    path::Path,
};

use crate::standard_streams::{ensure_open, Stream};

/// Writes `bytes` to `path` ("-" is stdout; an error if stdout was closed). A file is written next to its destination
/// under a temporary name and renamed into place, so readers never see half of it and an
/// existing file is only replaced on success, keeping its permissions; a symbolic link is
/// written through, as `mlir-opt -o` does, not replaced.
pub fn write_atomically(path: &str, bytes: &[u8]) -> io::Result<()> {
    if path == "-" {
        ensure_open(Stream::Stdout)?;
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        return stdout.flush();
    }
    let destination = through_links(Path::new(path))?;
    let destination = destination.as_path();
    // Devices and pipes (`/dev/null`, `/dev/stdout`, FIFOs) are written in place: there is
    // no file to replace.
    if destination.metadata().is_ok_and(|metadata| !metadata.is_file()) {
        return fs::write(destination, bytes);
    }
    let directory = match destination.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let file_name = destination
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("'{path}' is not a file path")))?;
    let temporary = directory.join(format!(".{}.{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let keep_permissions = |()| match destination.metadata() {
        Ok(existing) => fs::set_permissions(&temporary, existing.permissions()),
        Err(_) => Ok(()),
    };
    let result =
        fs::write(&temporary, bytes).and_then(keep_permissions).and_then(|()| fs::rename(&temporary, destination));
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

/// The path a chain of symbolic links ends at (the path itself when it is none).
fn through_links(path: &Path) -> io::Result<std::path::PathBuf> {
    let mut path = path.to_path_buf();
    // A bound on the chain, as the kernel has (ELOOP).
    for _ in 0..40 {
        if !path.symlink_metadata().is_ok_and(|metadata| metadata.file_type().is_symlink()) {
            return Ok(path);
        }
        let target = fs::read_link(&path)?;
        path = match path.parent() {
            Some(parent) if target.is_relative() => parent.join(target),
            _ => target,
        };
    }
    Err(io::Error::other(format!("too many levels of symbolic links at '{}'", path.display())))
}
