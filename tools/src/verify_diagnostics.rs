//! `--verify-diagnostics`: compare the diagnostics a run reports with the
//! `expected-error`/`-warning`/`-remark`/`-note` comments in its source, as `mlir-opt`
//! does.
//!
//! A comment `// expected-error {{text}}` expects an error on its own line whose message
//! contains `text`. A designator after the kind moves the line: `@+N`, `@-N`, `@N`
//! (absolute), `@above` / `@below` (the nearest line that holds no expectation), or
//! `@unknown` (a diagnostic with no file position). Every reported error, warning and
//! remark must be expected; notes are checked only where a note is expected.

use crate::diagnostics::{Kind, Reported};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub kind: Kind,
    /// The line the diagnostic must point at; `None` for `@unknown`.
    pub line: Option<usize>,
    pub text: String,
    /// Where the comment is, for reporting unmet expectations.
    pub comment_line: usize,
}

const KINDS: [(&str, Kind); 4] = [
    ("expected-error", Kind::Error),
    ("expected-warning", Kind::Warning),
    ("expected-remark", Kind::Remark),
    ("expected-note", Kind::Note),
];

/// Reads every expectation in `source`; a malformed comment is an error naming its line.
pub fn parse_expectations(source: &str) -> Result<Vec<Expected>, String> {
    let lines: Vec<&str> = source.lines().collect();
    let holds_expectation = |index: usize| lines[index].contains("expected-");
    let mut expectations = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let number = index + 1;
        let mut rest = *line;
        while let Some(start) = rest.find("expected-") {
            rest = &rest[start..];
            let Some((prefix, kind)) = KINDS.iter().find(|(prefix, _)| rest.starts_with(prefix)) else {
                rest = &rest["expected-".len()..];
                continue;
            };
            rest = &rest[prefix.len()..];
            let mut target = Some(number);
            if let Some(designator) = rest.strip_prefix('@') {
                let end = designator.find(char::is_whitespace).unwrap_or(designator.len());
                let word = &designator[..end];
                target = match word {
                    "unknown" => None,
                    "above" => (0..index).rev().find(|&i| !holds_expectation(i)).map(|i| i + 1),
                    "below" => (index + 1..lines.len()).find(|&i| !holds_expectation(i)).map(|i| i + 1),
                    _ if word.starts_with('+') || word.starts_with('-') => {
                        word.parse::<i64>().ok().map(|offset| (number as i64 + offset) as usize)
                    }
                    _ => word.parse::<usize>().ok(),
                };
                if target.is_none() && word != "unknown" {
                    return Err(format!("line {number}: invalid designator '@{word}'"));
                }
                rest = &designator[end..];
            }
            let text_start =
                rest.find("{{").ok_or_else(|| format!("line {number}: expected '{{{{' after '{prefix}'"))?;
            let body = &rest[text_start + 2..];
            let text_end =
                body.find("}}").ok_or_else(|| format!("line {number}: expected '}}}}' closing the message"))?;
            expectations.push(Expected {
                kind: *kind,
                line: target,
                text: body[..text_end].to_owned(),
                comment_line: number,
            });
            rest = &body[text_end + 2..];
        }
    }
    Ok(expectations)
}

/// Matches reported diagnostics against expectations; returns one message per mismatch
/// (`Reported` records with positions, so they render like any diagnostic).
pub fn check(expectations: &[Expected], reported: &[Reported]) -> Vec<Reported> {
    let mut met = vec![false; expectations.len()];
    let mut problems = Vec::new();
    for diagnostic in reported {
        // A position in another file is no line of this one: only `@unknown` matches it.
        let line = diagnostic.position.filter(|_| diagnostic.elsewhere.is_none()).map(|(line, _)| line);
        let matching = expectations.iter().enumerate().position(|(index, expected)| {
            !met[index]
                && expected.kind == diagnostic.kind
                && expected.line == line
                && diagnostic.message.contains(&expected.text)
        });
        match matching {
            Some(index) => met[index] = true,
            None if diagnostic.kind == Kind::Note => {}
            None => problems.push(Reported {
                kind: Kind::Error,
                position: diagnostic.position,
                elsewhere: diagnostic.elsewhere.clone(),
                message: format!("unexpected {}: {}", diagnostic.kind, diagnostic.message),
            }),
        }
    }
    for (expected, _) in expectations.iter().zip(&met).filter(|(_, met)| !**met) {
        problems.push(Reported {
            kind: Kind::Error,
            position: Some((expected.comment_line, 1)),
            elsewhere: None,
            message: format!("expected {} \"{}\" was not produced", expected.kind, expected.text),
        });
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(kind: Kind, line: usize, message: &str) -> Reported {
        Reported { kind, position: Some((line, 3)), elsewhere: None, message: message.into() }
    }

    #[test]
    fn designators() {
        let source = "\
op1 // expected-error {{same line}}
// expected-remark@+1 {{next}}
op3
// expected-warning@below {{below}}
// expected-note@-4 {{absolute via offset}}
op6
op7
// expected-error@above {{above}}
// expected-error@2 {{absolute}}
// expected-error@unknown {{nowhere}}";
        let found = parse_expectations(source).unwrap();
        let lines: Vec<(Kind, Option<usize>)> = found.iter().map(|e| (e.kind, e.line)).collect();
        assert_eq!(
            lines,
            vec![
                (Kind::Error, Some(1)),
                (Kind::Remark, Some(3)),
                (Kind::Warning, Some(6)),
                (Kind::Note, Some(1)),
                (Kind::Error, Some(7)),
                (Kind::Error, Some(2)),
                (Kind::Error, None),
            ]
        );
        assert_eq!(found[0].text, "same line");
    }

    #[test]
    fn malformed_comments() {
        assert!(parse_expectations("// expected-error {{no end").is_err());
        assert!(parse_expectations("// expected-error no braces").is_err());
        assert!(parse_expectations("// expected-error@sideways {{x}}").is_err());
    }

    #[test]
    fn matching() {
        let expected = parse_expectations("x // expected-error {{bad op}}\n// expected-remark@-1 {{why}}").unwrap();
        let ok = [reported(Kind::Error, 1, "'x' op is a bad op"), reported(Kind::Remark, 1, "why not")];
        assert!(check(&expected, &ok).is_empty());

        let wrong_line = [reported(Kind::Error, 2, "bad op"), reported(Kind::Remark, 1, "why")];
        let problems = check(&expected, &wrong_line);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].message.starts_with("unexpected error"));
        assert!(problems[1].message.contains("was not produced"));

        let unexpected_note_is_fine = [ok[0].clone(), ok[1].clone(), reported(Kind::Note, 1, "see op")];
        assert!(check(&expected, &unexpected_note_is_fine).is_empty());
    }
}
