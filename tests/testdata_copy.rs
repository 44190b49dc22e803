//! tests/data is a copy of the shared test vectors (../shared/testdata, from an independent
//! implementation of the rules), so that a clone of the repository alone runs every test. This
//! test keeps the copy honest: where the shared folder sits beside the project, every file in
//! it must be in tests/data byte for byte, and tests/data must hold nothing else. CI always has
//! the shared folder (CI=true makes its absence a failure); a bare clone skips the comparison.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| {
            entry
                .expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn tests_data_equals_the_shared_test_vectors() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let copy = root.join("tests/data");
    let shared = root.join("../shared/testdata");
    if !shared.is_dir() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {} is missing: CI must compare tests/data with the shared vectors",
            shared.display()
        );
        eprintln!("{} not found: comparison skipped", shared.display());
        return;
    }
    let shared_names = file_names(&shared);
    let copy_names = file_names(&copy);
    assert_eq!(
        shared_names, copy_names,
        "tests/data must hold exactly the files of ../shared/testdata"
    );
    for name in &shared_names {
        let a = std::fs::read(shared.join(name)).expect("shared file");
        let b = std::fs::read(copy.join(name)).expect("copied file");
        assert!(
            a == b,
            "tests/data/{name} differs from ../shared/testdata/{name}: copy it again"
        );
    }
}
