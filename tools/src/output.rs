//! Writing results so that a failed run leaves no partial or truncated file behind.

use std::{
    fs,
    io::{self, Write},
    path::Path,
};

/// Writes `bytes` to `path` ("-" is stdout). A file is written next to its destination
/// under a temporary name and renamed into place, so readers never see half of it and an
/// existing file is only replaced on success.
pub fn write_atomically(path: &str, bytes: &[u8]) -> io::Result<()> {
    if path == "-" {
        let mut stdout = io::stdout().lock();
        stdout.write_all(bytes)?;
        return stdout.flush();
    }
    let destination = Path::new(path);
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
    let result = fs::write(&temporary, bytes).and_then(|()| fs::rename(&temporary, destination));
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}
