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

/// Where text input uses a construct MLIR 22's parser crashes on (a segfault, in upstream
/// `mlir-opt-22` too): a dense array of `index` elements, `array<index: ...>`.
fn crashing_construct(bytes: &[u8]) -> Option<(usize, usize)> {
    // A quick look first: most inputs have no `array<` followed by `index` at all.
    let candidate = memchr::memmem::find_iter(bytes, b"array<")
        .any(|at| bytes[at + "array<".len()..].trim_ascii_start().starts_with(b"index"));
    if !candidate {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    text.lines().enumerate().find_map(|(line, content)| {
        // Outside string literals and before a `//` comment.
        let (mut in_string, mut escaped) = (false, false);
        for (at, character) in content.char_indices() {
            match character {
                '"' if !escaped => in_string = !in_string,
                '/' if !in_string && content[at..].starts_with("//") => return None,
                'a' if !in_string && content[at..].starts_with("array<") => {
                    let rest = content[at + "array<".len()..].trim_start();
                    let index_elements =
                        rest.strip_prefix("index").is_some_and(|after| after.trim_start().starts_with([':', '>']));
                    if index_elements {
                        return Some((line + 1, content[..at].chars().count() + 1));
                    }
                }
                _ => {}
            }
            escaped = character == '\\' && !escaped;
        }
        None
    })
}

/// Parses text or bytecode into a module (bare top-level ops get an implicit module).
/// Errors are reported through the context's diagnostics.
pub fn parse_module<'c>(context: &'c Context, bytes: &[u8]) -> Option<Module<'c>> {
    if let Some((line, column)) = crashing_construct(bytes).filter(|_| !is_bytecode(bytes)) {
        let location = melior::ir::Location::new(context, "-", line, column);
        flywheel_dialect::diagnostics::emit_error(
            location,
            "dense arrays of index elements (`array<index: ...>`) are not accepted: MLIR 22's parser crashes on them",
        );
        return None;
    }
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
    fn index_arrays_are_found() {
        assert_eq!(crashing_construct(b"a\n  \"t.op\"() {x = array<index: 1>} : () -> ()"), Some((2, 17)));
        // Not in a comment or a string.
        assert_eq!(crashing_construct(b"// x = array<index: 1>\n{s = \"array<index: 1>\"}"), None);
        assert_eq!(crashing_construct(b"{x = array< index >}"), Some((1, 6)));
        assert_eq!(crashing_construct(b"{x = array<i64: 1>, y = array<indexed: 2>}"), None);
    }

    #[test]
    fn bytecode_magic() {
        assert!(is_bytecode(b"ML\xefR\x00rest"));
        assert!(!is_bytecode(b"module {}"));
    }
}
