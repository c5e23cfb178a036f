//! Reading MLIR input: text or bytecode, whole or split at `// -----` markers.

use melior::{ir::Module, Context};
use mlir_sys::{mlirModuleCreateParse, MlirStringRef};

/// The magic number that starts MLIR bytecode.
const BYTECODE_MAGIC: &[u8] = b"ML\xefR";

pub fn is_bytecode(bytes: &[u8]) -> bool {
    bytes.starts_with(BYTECODE_MAGIC)
}

/// The marker `--split-input-file` splits at, as `mlir-opt` spells it.
pub const SPLIT_MARKER: &str = "// -----";

/// Splits text input at marker lines. Each chunk keeps its lines' original numbers (it is
/// padded with empty lines), so diagnostics and `expected-*@N` comments refer to the file.
pub fn split_chunks(text: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with(SPLIT_MARKER) {
            chunks.push(std::mem::take(&mut current));
            current = "\n".repeat(index + 1);
        } else {
            current.push_str(line);
        }
    }
    chunks.push(current);
    chunks
}

/// Parses text or bytecode into a module (bare top-level ops get an implicit module).
/// Errors are reported through the context's diagnostics.
pub fn parse_module<'c>(context: &'c Context, bytes: &[u8]) -> Option<Module<'c>> {
    // `Module::parse` takes `&str`; bytecode is not UTF-8, so pass the bytes directly.
    let source = MlirStringRef { data: bytes.as_ptr().cast(), length: bytes.len() };
    let raw = unsafe { mlirModuleCreateParse(context.to_raw(), source) };
    unsafe { Module::from_option_raw(raw) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_line_numbers() {
        let text = "a\n// -----\nb\nc\n// -----\nd";
        let chunks = split_chunks(text);
        assert_eq!(chunks, vec!["a\n", "\n\nb\nc\n", "\n\n\n\n\nd"]);
        assert_eq!(chunks[2].lines().nth(5), Some("d"));
    }

    #[test]
    fn bytecode_magic() {
        assert!(is_bytecode(b"ML\xefR\x00rest"));
        assert!(!is_bytecode(b"module {}"));
    }
}
