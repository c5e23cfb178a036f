//! Whether stdin or stdout was closed when the process started.
//!
//! Rust's runtime reopens a closed standard stream on `/dev/null` before `main`, so output
//! written to a closed stdout would vanish without an error and a closed stdin would read
//! as an empty file. A constructor that runs before the runtime records what was closed,
//! and the tools refuse to read or write such a stream (an I/O error, exit 2), as
//! `mlir-opt` does.

use std::{
    io,
    sync::atomic::{AtomicU8, Ordering},
};

/// A standard stream, by its file descriptor.
#[derive(Clone, Copy)]
pub enum Stream {
    Stdin = 0,
    Stdout = 1,
}

/// Bit `fd` is set when descriptor `fd` was closed at start.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

extern "C" fn record_closed_streams() {
    for fd in [Stream::Stdin as i32, Stream::Stdout as i32] {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(1 << fd, Ordering::Relaxed);
        }
    }
}

// Runs before `main` and before the Rust runtime touches the standard streams.
#[used]
#[link_section = ".init_array"]
static RECORD_CLOSED_STREAMS: extern "C" fn() = record_closed_streams;

/// An error when `stream` was closed at start ("Bad file descriptor", as reading or
/// writing it would have reported), to return before using it.
pub fn ensure_open(stream: Stream) -> io::Result<()> {
    if CLOSED_AT_START.load(Ordering::Relaxed) & (1 << stream as u8) != 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    Ok(())
}
