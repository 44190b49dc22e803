//! End-to-end test of the dashboard: starts the real server on a fresh SQLite database and
//! drives the pages in headless Chromium with `tests/e2e/dashboard.mjs` (playwright-core).
//!
//! Needs `node`, Chromium (`/usr/bin/chromium` or `$CHROMIUM`) and `npm ci` in `tests/e2e`.
//! With `CI=true` a missing piece fails the test; elsewhere the test skips with a notice.
//! The run-page screenshot goes to `$CARGO_TARGET_TMPDIR/screenshot-run.png`, and to
//! `docs/screenshot-run.png` when `KALAH_TUNER_UPDATE_SCREENSHOT=1` (so that running the tests
//! does not change a committed file).
//!
//! The script may ask for the server to be restarted on the same database (it prints
//! `RESTART-SERVER`): the server is killed, a new one starts, and its address is written to the
//! script's standard input, so that pages can be checked against what a restarted server
//! reads back.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Kills the server when it is dropped: at a restart, and when the test ends, passed or not.
struct Server {
    child: Child,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Removes the test's folder (database, logs) when the test ends.
struct Folder(PathBuf);

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// What is missing to run the browser test, if anything.
fn missing_prerequisites(e2e: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_ok {
        missing.push("node (apt-get install nodejs npm)".to_string());
    }
    match chromium() {
        Some(p) if p.exists() => {}
        Some(p) => missing.push(format!("Chromium at {} ($CHROMIUM)", p.display())),
        None => missing.push("Chromium (apt-get install chromium)".to_string()),
    }
    for package in ["playwright-core", "axe-core"] {
        if !e2e
            .join("node_modules")
            .join(package)
            .join("package.json")
            .exists()
        {
            missing.push(format!("{package} (npm ci in {})", e2e.display()));
        }
    }
    missing
}

/// Where a browser test's server keeps its data.
#[derive(Clone, Copy, PartialEq)]
enum Backend {
    /// A fresh SQLite file in the test's folder.
    Sqlite,
    /// The same, the server started with `KALAH_TUNER_TOKEN`; the script gets the token in
    /// `E2E_TOKEN`, as its operator would.
    SqliteWithToken,
    /// A fresh SQLite file, the server playing ladder games on a whole core at depth 1 (the
    /// others play none: they would take cores from the pages under test).
    SqliteWithLadder,
    /// A fresh PostgreSQL database (`KALAH_TUNER_TEST_PG_URL`), a `serve --no-batches` and
    /// two `kalah-tuner worker` processes of one game thread each, which play the batches.
    PostgresWithTwoWorkers,
}

/// `kalah-tuner worker` on `db_url`, one game thread, its log appended to the server's.
fn start_worker(dir: &Path, db_url: &str) -> Server {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))
        .expect("opening the log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args(["worker", "--threads", "1", "--database-url", db_url])
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("starting kalah-tuner worker");
    let mut stdout = BufReader::new(child.stdout.take().expect("worker stdout"));
    let mut line = String::new();
    stdout
        .read_line(&mut line)
        .expect("the worker says it is ready");
    assert!(line.contains("ready"), "unexpected first line {line:?}");
    // Drained so that the worker never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    Server {
        child,
        dir: dir.to_path_buf(),
    }
}

fn start_server(
    dir: &Path,
    db_url: Option<&str>,
    token: Option<&str>,
    ladder: bool,
) -> (Server, String) {
    std::fs::create_dir_all(dir).expect("creating the test's temporary folder");
    let db = match db_url {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", dir.join("e2e.db").display()),
    };
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))
        .expect("creating the server log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"));
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--database-url", &db])
        .args(if db_url.is_some() {
            &["--no-batches"][..]
        } else {
            &[]
        })
        .env_remove("KALAH_TUNER_TOKEN")
        .env_remove("DATABASE_URL")
        .env_remove("KALAH_TUNER_STATIC_DIR")
        .env("KALAH_TUNER_LADDER_SHARE", if ladder { "1" } else { "0" })
        .env("KALAH_TUNER_LADDER_DEPTH", "1");
    if let Some(token) = token {
        cmd.env("KALAH_TUNER_TOKEN", token);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("starting kalah-tuner serve");
    let stdout = child.stdout.take().expect("server stdout");
    let server = Server {
        child,
        dir: dir.to_path_buf(),
    };

    // The server prints "kalah-tuner listening on http://ADDR" once it accepts connections;
    // keep draining its output afterwards so that it never blocks on a full pipe.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if let Some(i) = line.find("http://") {
                let _ = tx.send(line[i..].trim().to_string());
            }
            line.clear();
        }
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest);
    });
    let url = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(url) => url,
        Err(_) => {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            panic!("the server did not say where it listens within 120 s; its log:\n{log}");
        }
    };
    (server, url)
}

/// One browser test at a time: each starts its own server and Chromium, and timings of live
/// pages are not to depend on another test's load.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn dashboard_in_headless_chromium() {
    run_script("dashboard.mjs");
}

/// The New run form starts a run of every tuner (GA, TD, TD-Leaf, Texel) with benchmark
/// fields.
#[test]
fn new_run_form_builds_every_tuner() {
    run_script("tuners.mjs");
}

/// An SPRT test is started from its page, watched live, ends on its verdict or is stopped;
/// tournaments with an SPRT show each pairing's verdict and LLR.
#[test]
fn sprt_tests_started_watched_and_stopped() {
    run_script("sprt.mjs");
}

/// A 12-pit board fits at 1280 px; on a phone it stands upright with pits of 40 px or more.
#[test]
fn board_fits_wide_screens_and_phones() {
    run_script("board.mjs");
}

/// gzip when asked but not on event streams; the fitness curve in pages.
#[test]
fn responses_are_compressed_and_curves_paged() {
    run_script("transfer.mjs");
}

/// axe-core finds no serious or critical violation on any page, in both themes.
#[test]
fn every_page_passes_axe_in_both_themes() {
    run_script("axe.mjs");
}

/// Finished runs' champions on the ladder page with ratings, intervals and the chart, a run
/// page's standing, a champion withdrawn; axe on the ladder page in both themes.
#[test]
fn the_ladder_page_shows_every_champion() {
    run_script_on("ladder.mjs", Backend::SqliteWithLadder);
}

/// On a server with a token: a read-only visitor is told before filling the New run form that a
/// token is needed; Settings checks a token with the server before keeping it (issue 34).
#[test]
fn token_is_checked_before_it_is_kept() {
    run_script_on("token.mjs", Backend::SqliteWithToken);
}

/// The workers page shows two `worker` processes on PostgreSQL playing a run's batches
/// (issue 34).
#[test]
fn workers_page_shows_two_workers_on_postgres() {
    run_script_on("workers.mjs", Backend::PostgresWithTwoWorkers);
}

/// No page is wider than the window with 200-character names, tags and notes (1280 and
/// 375 px), no page logs a console error on loading, the cancelled badge passes axe in both
/// themes, and the small texts of tournaments, the Texel form, the SPRT page and the tag
/// editor say what is true.
#[test]
fn long_names_fit_and_pages_load_cleanly() {
    run_script("polish.mjs");
}

/// Runs `tests/e2e/<script>` against a fresh server, as the module docs describe.
fn run_script(script: &str) {
    run_script_on(script, Backend::Sqlite);
}

fn run_script_on(script: &str, backend: Backend) {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    let missing = missing_prerequisites(&e2e);
    if !missing.is_empty() {
        let msg = format!(
            "dashboard e2e test needs: {} (see README, Dashboard)",
            missing.join(", ")
        );
        if in_ci() {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
        return;
    }

    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("kalah-tuner-e2e-{}-{stamp}", std::process::id()));
    let folder = Folder(dir.clone());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime for the database set-up");
    let pg = match backend {
        Backend::Sqlite | Backend::SqliteWithToken | Backend::SqliteWithLadder => None,
        Backend::PostgresWithTwoWorkers => match runtime.block_on(crate::support::pg_db()) {
            Some(db) => Some(db),
            // Not configured outside CI: pg_db said so.
            None => return,
        },
    };
    let db_url = pg.as_ref().map(|db| db.url.clone());
    // Not a secret: it guards a throwaway server for the length of one test.
    let token = (backend == Backend::SqliteWithToken).then(|| format!("e2e-token-{stamp}"));
    let (mut server, url) = start_server(
        &dir,
        db_url.as_deref(),
        token.as_deref(),
        backend == Backend::SqliteWithLadder,
    );
    let workers: Vec<Server> = match &db_url {
        Some(db) => (0..2).map(|_| start_worker(&dir, db)).collect(),
        None => Vec::new(),
    };

    let screenshot = if std::env::var("KALAH_TUNER_UPDATE_SCREENSHOT").is_ok_and(|v| v == "1") {
        root.join("docs/screenshot-run.png")
    } else {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshot-run.png")
    };
    let mut cmd = Command::new("node");
    cmd.arg(e2e.join(script))
        .arg(&url)
        .arg(&screenshot)
        .current_dir(root);
    if let Some(c) = chromium() {
        cmd.env("CHROMIUM", c);
    }
    match &token {
        Some(t) => cmd.env("E2E_TOKEN", t),
        None => cmd.env_remove("E2E_TOKEN"),
    };
    let mut node = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running node tests/e2e/{script}: {e}"));
    let mut to_node = node.stdin.take().expect("node's stdin");
    let from_node = BufReader::new(node.stdout.take().expect("node's stdout"));
    let mut node_err = node.stderr.take().expect("node's stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = node_err.read_to_string(&mut text);
        text
    });
    let mut stdout = String::new();
    for line in from_node.lines() {
        let Ok(line) = line else { break };
        println!("{line}");
        if line.trim() == "RESTART-SERVER" {
            // Killed, not stopped: what a crash or a power cut leaves is what must read back.
            drop(server);
            let (again, url) = start_server(
                &dir,
                db_url.as_deref(),
                token.as_deref(),
                backend == Backend::SqliteWithLadder,
            );
            server = again;
            writeln!(to_node, "{url}").expect("telling the script the new address");
        }
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let status = node.wait().expect("waiting for node");
    let stderr = errors.join().unwrap_or_default();
    if !status.success() {
        let log = std::fs::read_to_string(server.dir.join("server.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "dashboard e2e {script} failed ({}):\n{stdout}\n{stderr}\nlast lines of the server log:\n{}",
            status,
            tail.join("\n")
        );
    }
    eprintln!(
        "dashboard e2e {script} passed; screenshot at {}",
        screenshot.display()
    );
    drop(workers);
    drop(server);
    if let Some(db) = pg {
        runtime.block_on(db.drop_db());
    }
    drop(folder);
}
