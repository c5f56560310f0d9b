//! The core's shape, checked from its source: no import circles between its top-level modules,
//! none between the files of one folder, and the store depends on nothing above it. A `use` that
//! closes a circle fails here with the modules on it, before anyone has to find it by reading.
//!
//! Reads every `crate::…` and `super::…` path in `src/` (test modules at a file's end excluded;
//! names the crate root re-exports, such as `crate::App`, resolved to the module that defines
//! them) and looks for strongly connected components of the module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every module of the crate (`agent::record`, `mcp`, …) with its source, test modules cut off.
fn modules() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&root).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            let source = fs::read_to_string(&path).unwrap();
            out.insert(parts.join("::"), without_tests(&without_comments(&source)));
        }
    }
    out
}

fn without_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The source up to its `#[cfg(test)] mod …` (whose `super::` means the file itself).
fn without_tests(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
            if next.is_some_and(|l| l.trim_start().starts_with("mod ")) {
                return lines[..i].join("\n");
            }
        }
    }
    source.to_owned()
}

/// What the crate root re-exports, by name: `App` → `app`, `CoreError` → `error`.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.strip_prefix("crate::").unwrap_or(rest);
        let (module, names) = match rest.split_once("::{") {
            Some((module, names)) => (module, names.trim_end_matches('}').to_owned()),
            None => match rest.rsplit_once("::") {
                Some((module, name)) => (module, name.to_owned()),
                None => continue,
            },
        };
        for name in names.split(',') {
            out.insert(name.trim().to_owned(), module.to_owned());
        }
    }
    out
}

/// The identifier path that starts `text` (`store::Store::open` → `["store", "Store", "open"]`).
fn path_at(text: &str) -> Vec<&str> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].split("::").filter(|s| !s.is_empty()).collect()
}

/// The paths a `use` group names, each as written after the prefix (`{a, b::{c, D}}` → `a`,
/// `b::c`, `b::D`); `text` starts at `{`.
fn group_paths(text: &str) -> Vec<String> {
    let mut depth = 0usize;
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &text[1..end];
    let mut items = Vec::new();
    let (mut level, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level -= 1,
            ',' if level == 0 => {
                items.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(inner[start..].trim());
    let mut out = Vec::new();
    for item in items.into_iter().filter(|i| !i.is_empty()) {
        match item.find("::{") {
            Some(at) => {
                for rest in group_paths(&item[at + 2..]) {
                    out.push(format!("{}::{rest}", &item[..at]));
                }
            }
            None => out.push(item.to_owned()),
        }
    }
    out
}

/// Each path a source names after `prefix` (`crate::` or `super::`), groups opened.
fn paths_after(source: &str, at: usize, prefix: &str) -> Vec<String> {
    let rest = &source[at + prefix.len()..];
    if rest.starts_with('{') {
        group_paths(rest)
    } else {
        vec![path_at(rest).join("::")]
    }
}

/// Each module with the modules its paths name (as deep as the path's lowercase segments go).
fn references(modules: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let exports = root_exports(&modules[""]);
    let mut edges = Vec::new();
    for (module, source) in modules {
        for (at, _) in source.match_indices("crate::") {
            for named in paths_after(source, at, "crate::") {
                let path: Vec<&str> = named.split("::").filter(|s| !s.is_empty()).collect();
                let Some(first) = path.first() else { continue };
                let target = if first.starts_with(char::is_uppercase) {
                    match exports.get(*first) {
                        Some(m) => m.clone(),
                        None => continue,
                    }
                } else {
                    path.iter()
                        .take_while(|s| s.starts_with(|c: char| c.is_lowercase() || c == '_'))
                        .copied()
                        .collect::<Vec<_>>()
                        .join("::")
                };
                edges.push((module.clone(), target));
            }
        }
        for (at, _) in source.match_indices("super::") {
            if source[..at].ends_with("::") {
                continue;
            }
            for named in paths_after(source, at, "super::") {
                let path: Vec<&str> = named.split("::").filter(|s| !s.is_empty()).collect();
                let Some(first) = path.first().filter(|s| s.starts_with(char::is_lowercase)) else {
                    continue;
                };
                let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
                let target = if parent.is_empty() {
                    first.to_string()
                } else {
                    format!("{parent}::{first}")
                };
                edges.push((module.clone(), target));
            }
        }
    }
    edges
}

fn prefix(module: &str, depth: usize) -> String {
    module
        .split("::")
        .take(depth)
        .collect::<Vec<_>>()
        .join("::")
}

/// The module graph cut at `depth` segments, keeping only modules under `within` (if given).
fn graph(modules: &BTreeMap<String, String>, depth: usize, within: Option<&str>) -> Graph {
    let known: BTreeSet<String> = modules.keys().map(|m| prefix(m, depth)).collect();
    let inside = |m: &str| within.is_none_or(|w| m.starts_with(&format!("{w}::")));
    let mut g = Graph::new();
    for (from, to) in references(modules) {
        if !inside(&from) || !inside(&to) {
            continue;
        }
        let (a, b) = (prefix(&from, depth), prefix(&to, depth));
        if !a.is_empty() && a != b && known.contains(&b) {
            g.entry(a).or_default().insert(b);
        }
    }
    g
}

/// The strongly connected components with more than one module (Tarjan).
fn circles(g: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, n: &'a str) {
        let i = w.index.len();
        w.index.insert(n, i);
        w.low.insert(n, i);
        w.stack.push(n);
        if let Some(next) = w.g.get(n) {
            for m in next {
                if !w.index.contains_key(m.as_str()) {
                    visit(w, m);
                    let low = w.low[n].min(w.low[m.as_str()]);
                    w.low.insert(n, low);
                } else if w.stack.contains(&m.as_str()) {
                    let low = w.low[n].min(w.index[m.as_str()]);
                    w.low.insert(n, low);
                }
            }
        }
        if w.low[n] == w.index[n] {
            let mut component = Vec::new();
            while let Some(m) = w.stack.pop() {
                component.push(m.to_owned());
                if m == n {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut w = Walk {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for n in g.keys() {
        if !w.index.contains_key(n.as_str()) {
            visit(&mut w, n);
        }
    }
    w.found
}

#[test]
fn the_core_s_top_level_modules_import_in_one_direction() {
    let modules = modules();
    let g = graph(&modules, 1, None);
    assert!(g.len() > 10, "the graph was read: {g:?}");
    assert_eq!(
        circles(&g),
        Vec::<Vec<String>>::new(),
        "import circles between top-level modules"
    );
}

#[test]
fn the_files_of_each_folder_import_in_one_direction() {
    let modules = modules();
    let folders: BTreeSet<String> = modules
        .keys()
        .filter_map(|m| m.split_once("::").map(|(top, _)| top.to_owned()))
        .collect();
    assert!(
        folders.contains("mcp") && folders.contains("agent"),
        "{folders:?}"
    );
    for folder in folders {
        let g = graph(&modules, 2, Some(&folder));
        assert_eq!(
            circles(&g),
            Vec::<Vec<String>>::new(),
            "import circles inside {folder}/"
        );
    }
}

#[test]
fn the_store_depends_on_nothing_above_it() {
    let modules = modules();
    let g = graph(&modules, 1, None);
    // Leaves: each uses only std, crates and other leaves. `attachments` knows files and
    // bytes (what a file is, the folder that keeps them), nothing of messages; `price` knows
    // what a token costs, nothing of who asked; `schedules` knows time rules and when they
    // are due, nothing of runs; `knowledge` knows a project's files as text and passages,
    // nothing of projects.
    let leaves: BTreeSet<String> = [
        "text",
        "input",
        "paths",
        "attachments",
        "price",
        "schedules",
        "knowledge",
    ]
    .map(String::from)
    .into();
    let above: Vec<&String> = g
        .get("store")
        .into_iter()
        .flatten()
        .filter(|m| !leaves.contains(*m))
        .collect();
    assert!(above.is_empty(), "the store imports {above:?}");
    for leaf in &leaves {
        let uses: Vec<&String> = g
            .get(leaf)
            .into_iter()
            .flatten()
            .filter(|m| !leaves.contains(*m))
            .collect();
        assert!(uses.is_empty(), "the leaf {leaf} imports {uses:?}");
    }
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    let mut modules = BTreeMap::new();
    modules.insert(String::new(), "pub use error::CoreError;".to_owned());
    modules.insert("error".to_owned(), "use crate::app::App;".to_owned());
    modules.insert("app".to_owned(), "fn f() -> crate::CoreError {}".to_owned());
    modules.insert("app::run".to_owned(), "use super::chat::X;".to_owned());
    modules.insert("app::chat".to_owned(), "use crate::app::run::Y;".to_owned());
    modules.insert("store".to_owned(), "use crate::text::t;".to_owned());
    modules.insert("text".to_owned(), String::new());
    assert_eq!(
        circles(&graph(&modules, 1, None)),
        vec![vec!["app".to_owned(), "error".to_owned()]]
    );
    assert_eq!(
        circles(&graph(&modules, 2, Some("app"))),
        vec![vec!["app::chat".to_owned(), "app::run".to_owned()]]
    );
    // Grouped imports name their modules too, however nested.
    modules.insert(
        "store::messages".to_owned(),
        "use super::{conversations, Store};".to_owned(),
    );
    modules.insert(
        "store::tool_loop".to_owned(),
        "use super::{now_ms, messages::{self, Message}};".to_owned(),
    );
    modules.insert(
        "store::conversations".to_owned(),
        "use crate::{text, store::{Store, tool_loop::Run}};".to_owned(),
    );
    assert_eq!(
        circles(&graph(&modules, 2, Some("store"))),
        vec![vec![
            "store::conversations".to_owned(),
            "store::messages".to_owned(),
            "store::tool_loop".to_owned()
        ]]
    );
}

#[test]
fn the_app_is_the_one_object_the_window_and_the_command_line_hold() {
    let modules = modules();
    // What the window and the command line ask for is `App`'s: no layer of its own under it
    // (the engine that `App` used to wrap, reached through `app.core()`), no second root.
    for gone in ["engine", "core"] {
        assert!(
            !modules.contains_key(gone),
            "`{gone}` is a layer under `App`: its operations belong to `app/`"
        );
    }
    let roots: Vec<&String> = modules
        .iter()
        .filter(|(_, source)| source.contains("pub fn core(&self)"))
        .map(|(module, _)| module)
        .collect();
    assert!(
        roots.is_empty(),
        "an accessor to a layer under `App` in {roots:?}"
    );
}
