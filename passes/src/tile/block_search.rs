//! Block-size search for `flywheel-tile{auto-blocks=true}`: each candidate (query block,
//! key block) of an attention is tiled, lowered and compiled with libtpu's static
//! profile (deviceless), and the fewest cycles win. The decision is cached on disk per
//! (target, the attention as a standalone program, the candidates, the pipeline), so a
//! rerun compiles nothing.
//!
//! The passes do not link libtpu: the tool that runs them registers a [`Profiler`]
//! (`flywheel-opt` runs each candidate in child processes, so a libtpu abort on one
//! candidate only drops that candidate).

use flywheel_dialect::ops::AttentionOp;
use melior::ir::{operation::OperationLike, ValueLike};
use std::{path::PathBuf, sync::OnceLock};

/// How auto block search compiles its candidates, registered by the tool that runs the
/// passes.
#[derive(Clone, Copy)]
pub struct Profiler {
    /// Static cycles of `program` (a module holding one `flywheel.attention`) after the
    /// pass pipeline `pipeline`, compiled for `target`.
    pub profile: fn(program: &str, pipeline: &str, target: &str) -> Result<i64, String>,
    /// Names the compiler that profiles: decisions are cached per compiler, as another
    /// libtpu version schedules, and so chooses, differently.
    pub compiler: fn() -> String,
}

static PROFILER: OnceLock<Profiler> = OnceLock::new();

/// Registers the profiler auto block search uses (once per process).
pub fn set_profiler(profiler: Profiler) {
    let _ = PROFILER.set(profiler);
}

/// Why a search chose nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchFailure {
    /// Every candidate compiled but libtpu's static profiler aborted on each (as libtpu
    /// 0.0.50.1 does on head-dim-64 kernels for v6e): the caller may keep its blocks.
    ProfilerAborted,
    /// Something else: no profiler, libtpu missing, a candidate that does not lower.
    Failed(String),
}

/// The outcome of a search: the chosen blocks and every candidate's cycles (None: it
/// failed to compile or profile).
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub blocks: (i64, i64),
    pub measured: Vec<((i64, i64), Option<i64>)>,
    pub cached: bool,
}

/// The candidate with the fewest static cycles for `attention` on `target`. `pipeline`
/// maps a candidate to the pass pipeline that tiles and lowers it.
pub fn search(
    attention: AttentionOp,
    target: &str,
    candidates: &[(i64, i64)],
    pipeline: impl Fn((i64, i64)) -> String,
) -> Result<Choice, SearchFailure> {
    let program = standalone_program(attention).map_err(SearchFailure::Failed)?;
    let pipelines: Vec<String> = candidates.iter().map(|&c| pipeline(c)).collect();
    let profiler = PROFILER.get().ok_or_else(|| {
        SearchFailure::Failed("auto block search needs a libtpu profiler (flywheel-opt registers one)".into())
    })?;
    let compiler = (profiler.compiler)();
    let key = format!("{:016x}", fnv1a(&format!("{compiler}\n{target}\n{program}\n{pipelines:?}")));
    let cache = cache_directory().map(|directory| directory.join(format!("{key}.txt")));
    if let Some(choice) =
        cache.as_ref().and_then(|path| std::fs::read_to_string(path).ok()).and_then(|text| parse_choice(&text))
    {
        return Ok(choice);
    }
    let results: Vec<Result<i64, String>> =
        pipelines.iter().map(|pipeline| (profiler.profile)(&program, pipeline, target)).collect();
    let measured: Vec<((i64, i64), Option<i64>)> = candidates
        .iter()
        .zip(&results)
        .map(|(&candidate, result)| (candidate, result.as_ref().ok().copied()))
        .collect();
    let Some(blocks) = measured
        .iter()
        .filter_map(|&(candidate, cycles)| cycles.map(|c| (c, candidate)))
        .min()
        .map(|(_, candidate)| candidate)
    else {
        let errors: Vec<&String> = results.iter().filter_map(|result| result.as_ref().err()).collect();
        if errors.iter().all(|error| error.contains("aborted while profiling")) {
            return Err(SearchFailure::ProfilerAborted);
        }
        let first = errors
            .first()
            .map(|error| error.lines().find(|line| line.contains("error")).unwrap_or(error).trim().to_owned())
            .unwrap_or_default();
        return Err(SearchFailure::Failed(format!("no candidate block size compiled ({first})")));
    };
    let choice = Choice { blocks, measured, cached: false };
    if let Some(path) = cache {
        let _ = std::fs::create_dir_all(path.parent().expect("a directory"));
        let _ = std::fs::write(&path, format_choice(&choice));
    }
    Ok(choice)
}

/// The attention op alone in a module: a function of its operands returning its result.
fn standalone_program(attention: AttentionOp) -> Result<String, String> {
    let op = attention.operation();
    let types: Vec<String> = op.operands().map(|value| value.r#type().to_string()).collect();
    let result = op.result(0).map_err(|_| "no result")?.r#type().to_string();
    let arguments: Vec<String> = types.iter().enumerate().map(|(i, t)| format!("%arg{i}: {t}")).collect();
    let names: Vec<String> = (0..types.len()).map(|i| format!("%arg{i}")).collect();
    let attributes: Vec<String> = op
        .attributes()
        .map(|(name, value)| format!("{} = {value}", name.as_string_ref().as_str().unwrap_or("?")))
        .collect();
    Ok(format!(
        "func.func @main({}) -> {result} {{\n  %0 = \"flywheel.attention\"({}) {{{}}} : ({}) -> {result}\n  \"func.return\"(%0) : ({result}) -> ()\n}}\n",
        arguments.join(", "),
        names.join(", "),
        attributes.join(", "),
        types.join(", ")
    ))
}

/// `$FLYWHEEL_CACHE_DIR/blocks`, else `$XDG_CACHE_HOME/flywheel/blocks`, else
/// `~/.cache/flywheel/blocks`.
fn cache_directory() -> Option<PathBuf> {
    let base = std::env::var_os("FLYWHEEL_CACHE_DIR").map(PathBuf::from).or_else(|| {
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
            .map(|cache| cache.join("flywheel"))
    })?;
    Some(base.join("blocks"))
}

/// One line per candidate, `block_q block_kv cycles|failed`; the chosen one first.
fn format_choice(choice: &Choice) -> String {
    let line = |&((q, k), cycles): &((i64, i64), Option<i64>)| {
        format!("{q} {k} {}\n", cycles.map_or("failed".to_owned(), |c| c.to_string()))
    };
    let chosen =
        choice.measured.iter().find(|(candidate, _)| *candidate == choice.blocks).expect("the choice was measured");
    std::iter::once(chosen)
        .chain(choice.measured.iter().filter(|(candidate, _)| *candidate != choice.blocks))
        .map(line)
        .collect()
}

fn parse_choice(text: &str) -> Option<Choice> {
    let measured: Vec<((i64, i64), Option<i64>)> = text
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [q, k, cycles] => Some(((q.parse().ok()?, k.parse().ok()?), cycles.parse().ok())),
                _ => None,
            }
        })
        .collect::<Option<_>>()?;
    let blocks = measured.first()?.0;
    Some(Choice { blocks, measured, cached: true })
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100000001b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_choice_reads_back_with_the_winner_first() {
        let choice = Choice {
            blocks: (1024, 2048),
            measured: vec![((512, 1024), Some(120)), ((1024, 2048), Some(90)), ((2048, 1024), None)],
            cached: false,
        };
        let text = format_choice(&choice);
        assert_eq!(text, "1024 2048 90\n512 1024 120\n2048 1024 failed\n");
        let read = parse_choice(&text).unwrap();
        assert_eq!(read.blocks, (1024, 2048));
        assert!(read.cached);
        assert!(parse_choice("1024 x 3\n").is_none());
    }
}
