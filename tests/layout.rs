//! The house rule of every crate of the workspace: imports between its modules run one way (no
//! cycle), so each layer can be read without the ones above it. A `crate::a::b` in module `m` (outside comments) is
//! an edge from `m` to the longest module prefix of `a::b`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn modules(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            modules(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let name = rel
                .trim_end_matches("/mod.rs")
                .trim_end_matches(".rs")
                .replace('/', "::");
            out.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
}

fn imports(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in mods {
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let path: String = rest
                    .chars()
                    .take_while(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == ':'
                    })
                    .collect();
                let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
                while !parts.is_empty() && !mods.contains_key(&parts.join("::")) {
                    parts.pop();
                }
                let target = parts.join("::");
                if !target.is_empty()
                    && target != "lib"
                    && &target != m
                    && !m.starts_with(&format!("{target}::"))
                {
                    edges.entry(m.clone()).or_default().insert(target);
                }
            }
        }
    }
    edges
}

/// A cycle through `start`, if any (depth-first).
fn cycle_from(start: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in edges.get(&node).into_iter().flatten() {
            if next == start {
                let mut c = path.clone();
                c.push(start.to_string());
                return Some(c);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

/// The import edges of one crate's source folder (`dir`, relative to the workspace root).
fn crate_edges(dir: &str) -> (BTreeMap<String, String>, BTreeMap<String, BTreeSet<String>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut mods = BTreeMap::new();
    modules(&root, &root, &mut mods);
    let edges = imports(&mods);
    (mods, edges)
}

#[test]
fn no_crate_has_an_import_cycle() {
    for dir in ["src", "kernels/src", "gates/src", "tools/src"] {
        let (mods, edges) = crate_edges(dir);
        assert!(mods.len() > 3, "{dir}: no modules read");
        let cycles: Vec<String> = mods
            .keys()
            .filter_map(|m| cycle_from(m, &edges))
            .map(|c| c.join(" -> "))
            .collect();
        assert!(cycles.is_empty(), "import cycles in {dir}/: {cycles:#?}");
    }
}

/// The checker reads real edges, so a crate without a cycle is not one it failed to read.
#[test]
fn the_checker_sees_the_layers() {
    let (_, edges) = crate_edges("src");
    assert!(
        edges
            .get("exec")
            .is_some_and(|e| e.contains("runtime::team::dispatch"))
    );
    let (_, edges) = crate_edges("kernels/src");
    assert!(
        edges
            .get("lu::partial")
            .is_some_and(|e| e.contains("drive::lookahead") && e.contains("exec::gate"))
    );
    assert!(
        edges
            .get("svd::dqds")
            .is_some_and(|e| e.contains("spectral::scalar"))
    );
}

/// The kernels are one folder per decomposition, and a decomposition's folder imports only the
/// layers every kernel uses (`exec/`, `drive/`, `spectral/`) and the decompositions it is built
/// from (the SVD and the EVD apply QR's block reflectors and GEMM; the sparse Cholesky's top
/// runs the dense Cholesky and triangular solve; the sparse QR shares the sparse LU's
/// analysis and runs the dense QR): a new decomposition adds a
/// folder and touches no other one (`docs/adding-a-decomposition.md`). The family list
/// (`families.rs`) reads every decomposition's rows, and only the serial executor reads it
/// back (`Seq::model`, the host's built-in model).
#[test]
fn a_decomposition_imports_only_the_shared_layers() {
    const SHARED: [&str; 3] = ["exec", "drive", "spectral"];
    const BUILT_FROM: [(&str, &str); 12] = [
        ("svd", "gemm"),
        ("svd", "qr"),
        ("evd", "gemm"),
        ("evd", "qr"),
        ("sparse_cholesky", "cholesky"),
        ("sparse_cholesky", "triangular"),
        ("sparse_lu", "lu"),
        ("sparse_lu", "gemm"),
        ("sparse_lu", "triangular"),
        ("sparse_qr", "sparse_lu"),
        ("sparse_qr", "qr"),
        ("exec", "families"),
    ];
    let folder = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let (_, edges) = crate_edges("kernels/src");
    let mut wrong = Vec::new();
    for (m, targets) in &edges {
        let from = folder(m);
        for t in targets {
            let to = folder(t);
            let shared = SHARED.contains(&to.as_str()) && !SHARED.contains(&from.as_str());
            let layer = SHARED.contains(&from.as_str()) && (to == "exec" || from == to);
            let list = from == "families";
            if from == to
                || shared
                || layer
                || list
                || BUILT_FROM.contains(&(from.as_str(), to.as_str()))
            {
                continue;
            }
            wrong.push(format!("{m} -> {t}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across decompositions: {wrong:#?}"
    );
    // It reads real edges: the LU imports the driver, the SVD QR's reflectors.
    assert!(
        edges
            .get("lu::partial")
            .is_some_and(|e| e.contains("drive::lookahead"))
    );
    assert!(
        edges
            .get("svd")
            .is_some_and(|e| e.contains("qr::householder"))
    );
}

#[test]
fn the_checker_finds_a_cycle() {
    let mut mods = BTreeMap::new();
    mods.insert("a".to_string(), "use crate::b::Thing;".to_string());
    mods.insert(
        "b".to_string(),
        "// crate::a in a comment is no import\nfn f() { crate::c::g() }".to_string(),
    );
    mods.insert("c".to_string(), "use crate::a::{x, y};".to_string());
    let edges = imports(&mods);
    assert_eq!(
        cycle_from("a", &edges).unwrap().join(" -> "),
        "a -> b -> c -> a"
    );
    mods.insert("c".to_string(), "use crate::b;".to_string());
    let edges = imports(&mods);
    assert_eq!(cycle_from("a", &edges), None);
}

/// The tests are one folder per layer (`tests/executor/`, `tests/kernels/`, `tests/facade/`),
/// and Cargo finds only the top-level files of `tests/` by itself: a file of a layer folder
/// that is neither a `[[test]]` target nor a module of its layer's `main.rs` would never run.
#[test]
fn every_test_of_a_layer_is_a_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut seen = 0;
    for layer in ["executor", "kernels", "facade"] {
        let dir = root.join("tests").join(layer);
        // A layer may gather its files into one binary, `main.rs`, one module each.
        let main = std::fs::read_to_string(dir.join("main.rs")).unwrap_or_default();
        if !main.is_empty() {
            let target = format!("name = \"{layer}\"\npath = \"tests/{layer}/main.rs\"");
            assert!(
                manifest.contains(&target),
                "tests/{layer}/main.rs is no [[test]] target"
            );
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "main") else {
                continue;
            };
            let target = format!("name = \"{stem}\"\npath = \"tests/{layer}/{name}\"");
            let module = main.lines().any(|l| l.trim() == format!("mod {stem};"));
            assert!(
                manifest.contains(&target) || module,
                "tests/{layer}/{name} is neither a [[test]] target nor a module of tests/{layer}/main.rs"
            );
            seen += 1;
        }
    }
    assert!(seen > 30, "only {seen} test files read");
}
