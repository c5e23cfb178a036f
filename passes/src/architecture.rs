//! The crate's modules depend on each other one way: a test reads every source file's
//! `crate::` and `super::` paths and fails on a cycle between files.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

/// Every module file under `source` with the module files it names, as module paths
/// (`tile::attention`); `lib` for the crate root.
fn dependencies(source: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    collect(source, &mut files);
    let modules: Vec<(String, String)> = files
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(source).expect("under the source").with_extension("");
            let parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
            let parts = match parts.split_last() {
                Some((last, parent)) if last == "mod" => parent.to_vec(),
                _ => parts,
            };
            (parts.join("::"), std::fs::read_to_string(path).expect("a source file"))
        })
        .collect();
    let known: BTreeSet<&str> = modules.iter().map(|(module, _)| module.as_str()).collect();
    modules
        .iter()
        .map(|(module, text)| {
            let named = paths(text)
                .into_iter()
                .filter_map(|path| resolve(module, &path))
                .filter_map(|path| longest_module(&known, &path))
                .filter(|target| target != module && !module.starts_with(&format!("{target}::")))
                .collect();
            (module.clone(), named)
        })
        .collect()
}

fn collect(directory: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(directory).expect("a source directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// Every path a text names from `crate::` or `super::`, use trees expanded.
fn paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for root in ["crate::", "super::"] {
        let mut rest = text;
        while let Some(start) = rest.find(root) {
            let tail = &rest[start..];
            let end = tail.find(|c: char| !(c.is_alphanumeric() || "_:{}, \n".contains(c))).unwrap_or(tail.len());
            expand("", &tail[..end], &mut found);
            rest = &tail[root.len()..];
        }
    }
    found
}

/// Adds `prefix` joined with each path of the use tree `tree` (`a::{b, c::d}`).
fn expand(prefix: &str, tree: &str, found: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        Some(open) => {
            let head = format!("{prefix}{}", &tree[..open]);
            let mut depth = 0;
            let mut item = String::new();
            for c in tree[open + 1..].chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&head, &std::mem::take(&mut item), found);
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            expand(&head, &item, found);
        }
        None => {
            let path: String = tree.chars().take_while(|c| c.is_alphanumeric() || "_:".contains(*c)).collect();
            found.push(format!("{prefix}{path}").trim_end_matches(':').to_owned());
        }
    }
}

/// `path` (from `crate::` or `super::`, as written in `module`) from the crate root.
fn resolve(module: &str, path: &str) -> Option<String> {
    if let Some(rest) = path.strip_prefix("crate::") {
        return Some(rest.to_owned());
    }
    let mut base: Vec<&str> = module.split("::").collect();
    let mut rest = path;
    while let Some(after) = rest.strip_prefix("super::") {
        base.pop()?;
        rest = after;
    }
    Some(base.into_iter().chain(std::iter::once(rest)).filter(|part| !part.is_empty()).collect::<Vec<_>>().join("::"))
}

/// The longest prefix of `path` that is a module file.
fn longest_module(known: &BTreeSet<&str>, path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().map(|length| parts[..length].join("::")).find(|prefix| known.contains(prefix.as_str()))
}

/// A cycle in `graph`, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = stack.iter().position(|on| on == node) {
            return Some(stack[start..].iter().cloned().chain(std::iter::once(node.to_owned())).collect());
        }
        if !done.insert(node.to_owned()) {
            return None;
        }
        stack.push(node.to_owned());
        let found = graph.get(node).into_iter().flatten().find_map(|next| visit(next, graph, stack, done));
        stack.pop();
        found
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_depend_on_each_other_one_way() {
        let passes = dependencies(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        assert!(passes["registry"].contains("tile") && passes["tile::attention"].contains("tile::block_search"));
        assert_eq!(cycle(&passes), None);
        let kernels = dependencies(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/src"));
        assert!(kernels["gated_delta"].contains("attention"));
        assert_eq!(cycle(&kernels), None);
    }

    #[test]
    fn a_cycle_is_found_and_use_trees_expand() {
        let mut found = Vec::new();
        expand("", "a::{b, c::{d, e}}", &mut found);
        assert_eq!(found, ["a::b", "a::c::d", "a::c::e"]);
        assert_eq!(
            resolve("tile::attention", "super::block_search::Search"),
            Some("tile::block_search::Search".into())
        );
        let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
            .into_iter()
            .map(|(from, to)| (from.to_owned(), BTreeSet::from([to.to_owned()])))
            .collect();
        assert_eq!(cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    }
}
