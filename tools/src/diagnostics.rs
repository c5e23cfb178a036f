//! Collecting the diagnostics a context reports and rendering them like `mlir-opt`:
//! `file:line:col: error: message`, the source line, and a caret.

use melior::{
    diagnostic::{DiagnosticHandlerId, DiagnosticSeverity},
    ir::Location,
    Context,
};
use std::fmt::Write;
use std::{cell::RefCell, fmt, rc::Rc};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Error,
    Warning,
    Remark,
    Note,
}

impl Kind {
    pub fn from_severity(severity: DiagnosticSeverity) -> Kind {
        match severity {
            DiagnosticSeverity::Error => Kind::Error,
            DiagnosticSeverity::Warning => Kind::Warning,
            DiagnosticSeverity::Remark => Kind::Remark,
            DiagnosticSeverity::Note => Kind::Note,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Error => "error",
            Kind::Warning => "warning",
            Kind::Remark => "remark",
            Kind::Note => "note",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One diagnostic as reported, with the source position it points at (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    pub kind: Kind,
    /// 1-based line and column in the parsed buffer.
    pub position: Option<(usize, usize)>,
    /// The file the position is in when it is not the parsed buffer (a JAX program's
    /// locations point at its Python source).
    pub elsewhere: Option<String>,
    pub message: String,
}

/// The file position a location shows, following MLIR's choice: the callee of a call
/// site, the child of a name, the first file position of a fused location; with the file
/// when it is not the parsed buffer (whose locations name no file, or `-`).
pub fn file_position(location: Location) -> Option<(usize, usize, Option<String>)> {
    if location.is_file_line_col_range() {
        let file = location.file_line_col_range_filename();
        let file = file.as_string_ref();
        // SAFETY: MLIR hands `length` bytes at `data`.
        let bytes = unsafe { std::slice::from_raw_parts(file.to_raw().data.cast::<u8>(), file.to_raw().length) };
        let file = String::from_utf8_lossy(bytes);
        let elsewhere = (!file.is_empty() && file != "-").then(|| file.into_owned());
        return Some((
            location.file_line_col_range_start_line(),
            location.file_line_col_range_start_column(),
            elsewhere,
        ));
    }
    if location.is_name() {
        return file_position(location.name_child_location());
    }
    if location.is_call_site() {
        return file_position(location.call_site_callee());
    }
    if location.is_fused() {
        return (0..location.fused_num_locations()).find_map(|index| file_position(location.fused_location(index)));
    }
    None
}

/// Takes every diagnostic a context reports (so none reach the default stderr printer)
/// while attached.
pub struct Collector<'c> {
    context: &'c Context,
    id: DiagnosticHandlerId,
    reported: Rc<RefCell<Vec<Reported>>>,
}

impl<'c> Collector<'c> {
    pub fn attach(context: &'c Context) -> Self {
        let reported = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&reported);
        let id = context.attach_diagnostic_handler(move |diagnostic| {
            let mut sink = sink.borrow_mut();
            let mut record = |diagnostic: &melior::diagnostic::Diagnostic| {
                // `to_string` panics when the message is not UTF-8 (an op name in the
                // input may not be); `write!` reports it instead.
                let mut message = String::new();
                if write!(message, "{diagnostic}").is_err() {
                    message.push_str(" [the rest of the message is not UTF-8]");
                }
                let position = file_position(diagnostic.location());
                sink.push(Reported {
                    kind: Kind::from_severity(diagnostic.severity()),
                    position: position.as_ref().map(|&(line, column, _)| (line, column)),
                    elsewhere: position.and_then(|(_, _, file)| file),
                    message,
                });
            };
            record(&diagnostic);
            for index in 0..diagnostic.note_count() {
                if let Ok(note) = diagnostic.note(index) {
                    record(&note);
                }
            }
            true
        });
        Collector { context, id, reported }
    }

    /// The diagnostics reported since the last call.
    pub fn take(&self) -> Vec<Reported> {
        std::mem::take(&mut self.reported.borrow_mut())
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.context.detach_diagnostic_handler(self.id);
    }
}

/// `name:line:col: kind: message`, then the source line and a caret under the column;
/// a position in another file is named by that file and not quoted.
pub fn render(reported: &Reported, file_name: &str, source: &str) -> String {
    let Some((line, column)) = reported.position else {
        return format!("{file_name}: {}: {}\n", reported.kind, reported.message);
    };
    if let Some(elsewhere) = &reported.elsewhere {
        return format!("{elsewhere}:{line}:{column}: {}: {}\n", reported.kind, reported.message);
    }
    let mut text = format!("{file_name}:{line}:{column}: {}: {}\n", reported.kind, reported.message);
    // The line is quoted only when the column falls on it: a location may point anywhere
    // (another file, a column past 2^31), and a caret that far out would take gigabytes.
    let quoted = source.lines().nth(line.wrapping_sub(1)).filter(|text| column <= text.chars().count() + 1);
    if let Some(source_line) = quoted {
        text.push_str(source_line);
        text.push('\n');
        text.push_str(&" ".repeat(column.saturating_sub(1)));
        text.push_str("^\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carets_only_under_the_quoted_line() {
        let at = |line, column| Reported {
            kind: Kind::Error,
            position: Some((line, column)),
            elsewhere: None,
            message: "m".into(),
        };
        assert_eq!(render(&at(2, 3), "f", "a\nbcd\n"), "f:2:3: error: m\nbcd\n  ^\n");
        // A position in another file: named by it, not quoted from this one.
        let python = Reported { elsewhere: Some("model.py".into()), ..at(2, 3) };
        assert_eq!(render(&python, "f", "a\nbcd\n"), "model.py:2:3: error: m\n");
        // Past the line's end (a location in another file, or a column of 2^31): no quote.
        assert_eq!(render(&at(2, 2147483647), "f", "a\nbcd\n"), "f:2:2147483647: error: m\n");
    }
}
