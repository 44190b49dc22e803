//! Growing past one process: real `serve` and `worker` binaries on one database.
//!
//! - On PostgreSQL, a run coordinated by `serve --no-batches` and played by two `worker`
//!   processes writes an export byte-identical to `kalah-tuner evolve`'s, and still does when
//!   a worker is killed with SIGKILL in the middle of a batch; so do CMA-ES, SPSA and DE runs
//!   (`evolve --tuner`), and TD, TD-Leaf and Texel runs (`learn`).
//! - Two `serve` processes on one database (SQLite and PostgreSQL) never evaluate one run at
//!   once, and SIGTERM followed by an immediate restart loses nothing.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{on_both_backends, pg_db, reference_run, temp_folder, Api, TestDb};
use serde_json::{json, Value};
use sqlx::Row;

/// A child process killed when a failing assertion unwinds past it.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }

    /// Sends SIGTERM and returns how long the process took to exit.
    fn terminate(&mut self) -> Duration {
        let started = Instant::now();
        // SAFETY: kill(2) on our own child's pid, which is not reaped before wait below.
        unsafe {
            libc::kill(self.pid(), libc::SIGTERM);
        }
        let status = self.0.wait().expect("the process exits");
        assert!(status.success(), "a clean stop exits 0: {status}");
        started.elapsed()
    }
}

/// Starts the binary with `args` and waits for the first line it prints (its address, or
/// that it is ready).
fn spawn(args: &[&str]) -> (Proc, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args(args)
        .env("RUST_LOG", "warn,kalah_tuner=info")
        .env_remove("KALAH_TUNER_TOKEN")
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the process prints its first line");
    (Proc(child), line.trim().to_string())
}

fn serve(db: &TestDb, extra: &[&str]) -> (Proc, Api) {
    let mut args = vec![
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--database-url",
        &db.url,
    ];
    args.extend_from_slice(extra);
    let (proc, line) = spawn(&args);
    (proc, Api::new(crate::support::address_in(&line)))
}

fn worker(db: &TestDb) -> Proc {
    let (proc, line) = spawn(&["worker", "--threads", "1", "--database-url", &db.url]);
    assert!(line.contains("ready"), "unexpected first line {line:?}");
    proc
}

async fn sql_rows(db: &TestDb, sql: &str) -> Vec<sqlx::any::AnyRow> {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db.url).await.expect("database");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_all(&pool)
        .await
        .expect("SQL");
    pool.close().await;
    rows
}

/// Depth-6 games, 900 a generation (about 4 s of processor time by the cost model), 3
/// generations: the queue cuts each generation into a few batches of a second or so (it makes
/// none smaller than `MIN_BATCH_MS` of estimated games, so a cheaper generation would be one
/// batch that one worker takes whole).
fn spread_config() -> Value {
    json!({"population": 10, "depth": 6, "generations": 3, "seed": 14,
           "fitness": {"games_per_pair": 20},
           "benchmark": {"pairs": 2, "panel": ["minimax:2"]}})
}

/// `kalah-tuner evolve` on `config`: the export's bytes.
fn evolve_export(config: &Value) -> String {
    command_export("evolve", config)
}

/// `kalah-tuner learn` on `config` (its `method` names the learner): the export's bytes.
fn learn_export(config: &Value) -> String {
    command_export("learn", config)
}

/// `kalah-tuner COMMAND --config FILE --out EXPORT` on two threads: the export's bytes.
fn command_export(command: &str, config: &Value) -> String {
    let dir = temp_folder(command);
    let config_path = dir.join("config.json");
    let out = dir.join("export.json");
    std::fs::write(&config_path, config.to_string()).expect("config file");
    let ran = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args([command, "--threads", "2", "--config"])
        .arg(&config_path)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("the command runs");
    assert!(
        ran.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let bytes = std::fs::read_to_string(&out).expect("export");
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

async fn export_bytes(api: &Api, id: &str) -> String {
    let response = api
        .client
        .get(format!("{}/api/runs/{id}/export", api.base))
        .send()
        .await
        .expect("GET export");
    assert_eq!(response.status().as_u16(), 200);
    response.text().await.expect("body")
}

/// Which processes wrote the results of a run's batches.
async fn batch_workers(db: &TestDb, run: &str) -> Vec<String> {
    sql_rows(
        db,
        &format!(
            "SELECT DISTINCT worker FROM batch_results WHERE run_id = '{run}' ORDER BY worker"
        ),
    )
    .await
    .iter()
    .map(|r| r.get::<String, _>("worker"))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_played_by_two_workers_exports_as_evolve() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(&db, &["--no-batches"]);
    let _w1 = worker(&db);
    let _w2 = worker(&db);
    let config = spread_config();
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().expect("id").to_string();
    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");

    assert_eq!(export_bytes(&api, &id).await, evolve_export(&config));
    let workers = batch_workers(&db, &id).await;
    assert_eq!(workers.len(), 2, "both workers played batches: {workers:?}");
    assert!(
        workers.iter().all(|w| w.starts_with("worker@")),
        "{workers:?}"
    );
    // The run is charged the processor time its batches took on the workers' threads (and
    // its coordinator's own, which is small): measured, so more than nothing.
    let rows = sql_rows(
        &db,
        &format!("SELECT processor_ms FROM batch_results WHERE run_id = '{id}'"),
    )
    .await;
    let batches_ms: i64 = rows
        .iter()
        .map(|r| r.get::<Option<i64>, _>("processor_ms").unwrap_or(0))
        .sum();
    let charged = done["processor_seconds"].as_f64().unwrap_or(0.0);
    assert!(batches_ms > 0, "batches measured: {batches_ms} ms");
    assert!(
        charged * 1000.0 >= batches_ms as f64 - 1.0,
        "{charged} s charged for {batches_ms} ms of batches"
    );
    db.drop_db().await;
}

/// On PostgreSQL with live workers, the ladder's rounds go to the queue: a champion's games on
/// the ladder are played by the `worker` process (the server plays no batches), and each
/// round's processor time is measured there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_rounds_are_played_by_the_queue_workers() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(
        &db,
        &["--no-batches", "--ladder-share", "1", "--ladder-depth", "1"],
    );
    let _w = worker(&db);
    let run = api
        .create_run(json!({"config": {"population": 4, "generations": 2, "depth": 1, "seed": 5}}))
        .await;
    let id = run["id"].as_str().expect("id").to_string();
    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, ladder) = api.get("/api/ladder?board=6,4&depth=1").await;
        let champion_played = ladder["players"].as_array().is_some_and(|players| {
            players
                .iter()
                .any(|p| p["run_id"] == id.as_str() && p["trials"].as_u64().unwrap_or(0) > 0)
        });
        let rounds = sql_rows(
            &db,
            "SELECT worker, processor_ms FROM batch_results WHERE run_id LIKE 'ladder:%'",
        )
        .await;
        if champion_played && !rounds.is_empty() {
            for round in &rounds {
                let worker: String = round.get("worker");
                assert!(worker.starts_with("worker@"), "played by {worker}");
                assert!(round.get::<Option<i64>, _>("processor_ms").is_some());
            }
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no ladder round on the queue: {ladder}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    db.drop_db().await;
}

/// CMA-ES, SPSA and DE runs play their generations as a GA run does, so their fitness games
/// go to the queue too, and the export is `evolve --tuner`'s to the byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn population_tuner_runs_played_by_workers_export_as_evolve() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(&db, &["--no-batches"]);
    let _w1 = worker(&db);
    let _w2 = worker(&db);
    for tuner in ["cmaes", "spsa", "de"] {
        let config = spread_config();
        let run = api
            .create_run(json!({"tuner": tuner, "config": config}))
            .await;
        let id = run["id"].as_str().expect("id").to_string();
        let done = api.wait_status(&id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{done}");
        let mut file = config.clone();
        file["tuner"] = json!(tuner);
        let served = export_bytes(&api, &id).await;
        assert!(
            served.contains(&format!("\"tuner\": \"{tuner}\"")),
            "{served}"
        );
        assert_eq!(served, evolve_export(&file), "{tuner}");
        assert!(
            !batch_workers(&db, &id).await.is_empty(),
            "{tuner}: workers played"
        );
    }
    db.drop_db().await;
}

/// TD, TD-Leaf and Texel runs served on PostgreSQL beside two workers export what `learn`
/// does for the same config, to the byte. A learner learns from each self-play game before the
/// next, so the process that steps the run plays them; no batch goes to the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn learner_runs_served_beside_workers_export_as_learn() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(&db, &["--no-batches"]);
    let _w1 = worker(&db);
    let _w2 = worker(&db);
    let td = json!({"games": 64, "checkpoint_games": 32, "depth": 2, "play_depth": 2,
                    "seed": 5, "benchmark": {"pairs": 4}});
    let texel = json!({"games": 16, "rounds": 2, "depth": 2, "exact_seeds": 10,
                       "play_depth": 2, "seed": 5, "benchmark": {"pairs": 4}});
    for (tuner, config) in [("td", &td), ("td-leaf", &td), ("texel", &texel)] {
        let run = api
            .create_run(json!({"tuner": tuner, "config": config}))
            .await;
        let id = run["id"].as_str().expect("id").to_string();
        let done = api.wait_status(&id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{tuner}: {done}");
        let mut file = config.clone();
        file["method"] = json!(tuner);
        assert_eq!(
            export_bytes(&api, &id).await,
            learn_export(&file),
            "{tuner}"
        );
        assert!(
            batch_workers(&db, &id).await.is_empty(),
            "{tuner}: no batches"
        );
    }
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_batch_loses_nothing() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(&db, &["--no-batches"]);
    let mut doomed = worker(&db);
    // Depth 7: batches of a second or more, so the kill lands inside one.
    let config = json!({"population": 6, "depth": 7, "generations": 3, "seed": 3,
                        "fitness": {"games_per_pair": 10}, "benchmark": {"panel": []}});
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().expect("id").to_string();

    // Wait until the doomed worker holds a batch (the queue locks it), then kill it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let locked = sql_rows(
            &db,
            "SELECT COUNT(*) AS n FROM kalah_tuner_queue._private_jobs WHERE locked_at IS NOT NULL",
        )
        .await[0]
            .get::<i64, _>("n");
        if locked > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "no batch was ever taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    doomed.0.kill().expect("SIGKILL");
    doomed.0.wait().expect("reaped");
    let killed_at = Instant::now();
    let _rescuer = worker(&db);

    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    eprintln!(
        "finished {:.1} s after the kill (the queue returns a dead worker's batch after 10 s)",
        killed_at.elapsed().as_secs_f64()
    );
    assert_eq!(export_bytes(&api, &id).await, evolve_export(&config));
    db.drop_db().await;
}

/// A GA run of a few seconds on one thread.
fn small_run(seed: u64) -> Value {
    json!({"config": {"population": 6, "depth": 5, "generations": 6, "seed": seed,
                      "fitness": {"games_per_pair": 10},
                      "benchmark": {"pairs": 2, "panel": ["minimax:2"]}}})
}

async fn two_servers_share_runs(db: TestDb) {
    let (first, api) = serve(&db, &[]);
    let (_second, api2) = serve(&db, &[]);
    let mut runs = Vec::new();
    for seed in 0..4 {
        let run = api.create_run(small_run(seed)).await;
        runs.push((
            run["id"].as_str().expect("id").to_string(),
            run["config"].clone(),
        ));
    }
    // Both evolve a run at once (one each: --workers 1), each under its own lease.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let owners = sql_rows(
            &db,
            "SELECT COUNT(DISTINCT owner) AS n FROM runs WHERE status = 'running'",
        )
        .await[0]
            .get::<i64, _>("n");
        if owners == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the two servers never ran two runs at once"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A browser watches the first server's run: its event stream must not hold the server
    // open past SIGTERM.
    let watched: String = sql_rows(&db, "SELECT id FROM runs WHERE status = 'running'")
        .await
        .iter()
        .map(|r| r.get::<String, _>("id"))
        .next()
        .expect("a running run");
    let mut events = api
        .client
        .get(format!("{}/api/runs/{watched}/events", api.base))
        .send()
        .await
        .expect("event stream");
    let reader = tokio::spawn(async move { while let Ok(Some(_)) = events.chunk().await {} });

    // SIGTERM: the first stops within 10 s, handing its run back; restarted at once.
    let took = tokio::task::spawn_blocking(move || {
        let mut first = first;
        first.terminate()
    })
    .await
    .expect("terminate");
    reader.abort();
    assert!(took < Duration::from_secs(10), "SIGTERM took {took:?}");
    let (_restarted, api3) = serve(&db, &[]);

    for (id, config) in &runs {
        let done = api2.wait_status(id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{done}");
        let (_, records, reference) = reference_run(config);
        crate::support::check_records(&api3, id, &records).await;
        assert_eq!(crate::support::export(&api3, id).await, reference);
    }
    // Each run was claimed once, or twice when the stopped server handed it back: never
    // taken over from a live owner.
    let claims: Vec<i64> = sql_rows(&db, "SELECT claim FROM runs")
        .await
        .iter()
        .map(|r| r.get::<i64, _>("claim"))
        .collect();
    assert!(claims.iter().all(|&c| c == 1 || c == 2), "{claims:?}");
    assert!(
        claims.contains(&2),
        "the stopped server's run was resumed elsewhere: {claims:?}"
    );
    db.drop_db().await;
}

on_both_backends!(
    two_servers_share_runs(db):
    sqlite_two_servers_share_runs_and_survive_sigterm,
    postgres_two_servers_share_runs_and_survive_sigterm
);

/// The lease rules themselves, on a store: a fresh lease is never taken, a stale one is, the
/// old owner then learns it lost the run, and a released run is claimed again at once.
async fn leases(db: TestDb) {
    use kalah_tuner::store::{NewRun, RunStatus, Store};
    use kalah_tuner::tune::TunerConfig;
    let store = Store::connect(&db.url).await.expect("store");
    let run = store
        .create_run(&NewRun {
            id: "lease-run".into(),
            name: None,
            preset: None,
            config: TunerConfig::new(kalah_tuner::ga::GaConfig::default()),
            features: json!([]),
            created_by: None,
        })
        .await
        .expect("run");
    assert_eq!(run.status, RunStatus::Queued);

    let a = store
        .claim_next("a")
        .await
        .expect("claim")
        .expect("queued run");
    assert_eq!(a.claim, 1);
    assert!(
        store.claim_next("b").await.expect("claim").is_none(),
        "a fresh lease is kept"
    );
    assert!(store.heartbeat(&a.id, 1).await.expect("beat"));

    // The owner falls silent for longer than the lease.
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db.url).await.expect("database");
    sqlx::query("UPDATE runs SET heartbeat_at = '2000-01-01T00:00:00.000Z'")
        .execute(&pool)
        .await
        .expect("SQL");
    pool.close().await;
    let b = store
        .claim_next("b")
        .await
        .expect("claim")
        .expect("stale run");
    assert_eq!((b.id.as_str(), b.claim), ("lease-run", 2));
    assert!(
        !store.heartbeat(&a.id, 1).await.expect("beat"),
        "the old owner lost it"
    );
    assert!(
        !store.release(&a.id, 1).await.expect("release"),
        "and cannot hand it back"
    );

    assert!(store.release(&b.id, 2).await.expect("release"));
    let again = store
        .claim_next("c")
        .await
        .expect("claim")
        .expect("released run");
    assert_eq!(again.claim, 3);
    store.close().await;
    db.drop_db().await;
}

on_both_backends!(leases(db): sqlite_leases, postgres_leases);

/// A slice's result is written once; the same result again is accepted, a different one is
/// reported (and the worker that meets it fails the run with a determinism error).
async fn slice_results_are_written_once(db: TestDb) {
    use kalah_tuner::runner::{ResultWrite, SliceKey};
    use kalah_tuner::store::Store;
    let store = Store::connect(&db.url).await.expect("store");
    let key = SliceKey {
        run_id: "r".into(),
        generation: 3,
        part: 0,
        first_job: 10,
        jobs: 3,
    };
    let points = [1.0, 0.5, 0.0];
    let put = |p: &'static [f64]| {
        let (store, key) = (store.clone(), key.clone());
        async move {
            store
                .put_slice_result(&key, p, "w", 5, 4)
                .await
                .expect("write")
        }
    };
    assert_eq!(put(&[1.0, 0.5, 0.0]).await, ResultWrite::Written);
    assert_eq!(put(&[1.0, 0.5, 0.0]).await, ResultWrite::Same);
    assert_eq!(
        put(&[1.0, 1.0, 0.0]).await,
        ResultWrite::Different {
            stored: points.to_vec()
        }
    );
    assert!(
        store
            .put_slice_result(&key, &[1.0], "w", 5, 4)
            .await
            .is_err(),
        "wrong length"
    );
    store.close().await;
    db.drop_db().await;
}

on_both_backends!(
    slice_results_are_written_once(db):
    sqlite_slice_results_are_written_once,
    postgres_slice_results_are_written_once
);

/// SIGTERM of a `worker` in the middle of a depth-10 game on Kalah(12,8) (a minute or more
/// each) exits 0 within 10 s: its stop reaches inside the game under way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_worker_mid_game_within_10_s() {
    let Some(db) = pg_db().await else { return };
    let (_coordinator, api) = serve(&db, &["--no-batches"]);
    let mut busy = worker(&db);
    let config = json!({"population": 3, "depth": 10, "generations": 1, "seed": 5,
                        "board": {"pits": 12, "seeds": 8}, "benchmark": {"panel": []}});
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let locked = sql_rows(
            &db,
            "SELECT COUNT(*) AS n FROM kalah_tuner_queue._private_jobs WHERE locked_at IS NOT NULL",
        )
        .await[0]
            .get::<i64, _>("n");
        if locked > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "no batch was ever taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Well into the batch's first game.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let took = busy.terminate();
    assert!(took < Duration::from_secs(10), "SIGTERM took {took:?}");
    assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
    db.drop_db().await;
}
