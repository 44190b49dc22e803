//! Crash safety: the real binary is killed with SIGKILL in the middle of a run (of the GA,
//! TD-Leaf or Texel), started again on the same database, and the run finishes with every
//! generation (checkpoint) exactly once and the export of an uninterrupted run.

use std::process::{Child, Command, Stdio};

use crate::support::{
    check_finishes_as_uninterrupted, check_records, export, on_both_backends, pg_db, reference_run,
    server_with, sqlite_db, Api, TestDb,
};
use serde_json::{json, Value};

/// Kills the child server when a failing assertion unwinds past it.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `kalah-tuner serve` on a free port and returns it with its base URL, read from the
/// line it prints once listening.
fn spawn_server(db: &TestDb) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--threads",
            "2",
            "--database-url",
            &db.url,
        ])
        .env("RUST_LOG", "warn")
        .env_remove("KALAH_TUNER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server binary starts");
    let base = crate::support::listening_address(&mut child);
    (Server(child), base)
}

/// About 150 depth-4 games a generation, 16 generations: a GA run of a few seconds.
fn ga_run() -> Value {
    json!({"config": {"population": 6, "depth": 4, "generations": 16, "seed": 11,
                      "fitness": {"games_per_pair": 10}}})
}

/// TD-Leaf with 12 checkpoints of 160 self-play games: a few seconds.
fn td_leaf_run() -> Value {
    json!({"tuner": "td-leaf", "config": {"games": 1920, "depth": 3, "checkpoint_games": 160,
           "seed": 5, "play_depth": 3, "benchmark": {"pairs": 8}}})
}

/// Texel with 10 rounds on 3,200 positions: a few seconds, sampling included (which a
/// restarted server does again).
fn texel_run() -> Value {
    json!({"tuner": "texel", "config": {"games": 400, "rounds": 10, "depth": 2,
           "exact_seeds": 10, "seed": 5, "play_depth": 4, "benchmark": {"pairs": 16}}})
}

async fn crash_and_resume(db: TestDb, body: Value) {
    let (mut child, base) = spawn_server(&db);
    let api = Api::new(base);
    let mut body = body;
    body["name"] = json!("crash");
    let run = api.create_run(body).await;
    let id = run["id"].as_str().unwrap().to_string();
    let total = run["generations_total"].as_u64().unwrap();
    let seen = api.wait_generations(&id, 3).await;
    // Child::kill sends SIGKILL on Unix: no chance to finish the generation under way.
    child.0.kill().expect("SIGKILL");
    child.0.wait().expect("reaped");
    assert_eq!(seen["status"], "running", "killed mid-run: {seen}");
    assert!(seen["generations_done"].as_u64().unwrap() < total);

    let (child, base) = spawn_server(&db);
    let api = Api::new(base);
    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["generations_done"], total);

    let (_, records, reference) = reference_run(&run["config"]);
    assert_eq!(records.len() as u64, total);
    check_records(&api, &id, &records).await;
    assert_eq!(export(&api, &id).await, reference);
    drop(child);
    db.drop_db().await;
}

on_both_backends!(
    crash_and_resume(db, ga_run()):
    sqlite_run_survives_sigkill,
    postgres_run_survives_sigkill
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_td_leaf_run_survives_sigkill() {
    crash_and_resume(sqlite_db(), td_leaf_run()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_texel_run_survives_sigkill() {
    crash_and_resume(sqlite_db(), texel_run()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_learning_runs_survive_sigkill() {
    for body in [td_leaf_run(), texel_run()] {
        let Some(db) = pg_db().await else { return };
        crash_and_resume(db, body).await;
    }
}

/// SIGTERM stops the server promptly, and the SQLite write-ahead log is checkpointed on the
/// way out: a copy of the `.db` file alone (what a backup of a stopped server takes) holds
/// the run and its generations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_leaves_a_complete_sqlite_file() {
    let db = sqlite_db();
    let (mut child, base) = spawn_server(&db);
    let api = Api::new(base);
    let mut body = ga_run();
    body["name"] = json!("sigterm");
    let run = api.create_run(body).await;
    let id = run["id"].as_str().unwrap().to_string();
    let seen = api.wait_generations(&id, 2).await;
    let done = seen["generations_done"].as_u64().unwrap();
    let started = std::time::Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = child.0.wait().expect("reaped");
    let stopped_in = started.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(
        stopped_in < std::time::Duration::from_secs(10),
        "stopping took {stopped_in:?}"
    );
    let path = db.url.strip_prefix("sqlite://").unwrap().to_string();
    let wal = std::path::PathBuf::from(format!("{path}-wal"));
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "the log still holds {} bytes",
        std::fs::metadata(&wal).unwrap().len()
    );
    let copy = format!("{path}.copy");
    std::fs::copy(&path, &copy).expect("copies the database file");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{copy}?mode=ro"))
        .await
        .expect("the copy opens");
    let (generations,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM generations WHERE run_id = ?")
            .bind(&id)
            .fetch_one(&pool)
            .await
            .expect("the copy holds the generations table");
    assert!(
        generations as u64 >= done,
        "{generations} generations in the copy, {done} seen before the signal"
    );
    pool.close().await;
    drop(child);
    db.drop_db().await;
}

/// A TCP proxy in front of PostgreSQL that can cut every connection and refuse new ones for a
/// while: a database outage, as the server sees one.
struct Outage {
    addr: std::net::SocketAddr,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    links: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Outage {
    async fn start(target: String) -> Outage {
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let links = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (d, l) = (down.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if d.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused
                }
                let target = target.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                l.lock().unwrap().push(link);
            }
        });
        Outage { addr, down, links }
    }

    /// Cuts every open connection and refuses new ones.
    fn cut(&self) {
        self.down.store(true, std::sync::atomic::Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.down.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// PostgreSQL goes away for 6 s in the middle of a run (every connection cut, new ones
/// refused): the worker waits it out, retrying with back-off, and the run ends finished with
/// the records and export of an uninterrupted run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_mid_run_is_waited_out() {
    let Some(db) = pg_db().await else { return };
    let (authority, rest) = {
        let after_scheme = db.url.split_once("://").unwrap().1;
        let (userinfo_host, rest) = after_scheme.split_once('/').unwrap();
        let host = userinfo_host
            .rsplit_once('@')
            .map_or(userinfo_host, |(_, h)| h);
        (host.to_string(), rest.to_string())
    };
    let outage = Outage::start(authority.clone()).await;
    let user = db
        .url
        .split_once("://")
        .unwrap()
        .1
        .split_once('@')
        .map(|(u, _)| u);
    let proxied = match user {
        Some(user) => format!("postgres://{user}@{}/{rest}", outage.addr),
        None => format!("postgres://{}/{rest}", outage.addr),
    };
    let srv = server_with(&db, |c| c.database_url = proxied).await;
    let api = Api::of(&srv);
    let run = api.create_run(ga_run()).await;
    let id = run["id"].as_str().unwrap().to_string();
    let total = run["generations_total"].as_u64().unwrap();
    let seen = api.wait_generations(&id, 3).await;
    assert!(seen["generations_done"].as_u64().unwrap() < total);
    outage.cut();
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    outage.restore();
    check_finishes_as_uninterrupted(&api, &id, &run["config"]).await;
    srv.shutdown().await;
    db.drop_db().await;
}

/// `/healthz` is liveness only and answers at once while the database is gone; `/readyz`
/// says 503 within about a second then, in the API's error shape, and 200 once it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_readiness_follows_the_database_and_liveness_does_not() {
    let Some(db) = pg_db().await else { return };
    let after_scheme = db.url.split_once("://").unwrap().1;
    let (userinfo_host, rest) = after_scheme.split_once('/').unwrap();
    let (user, host) = match userinfo_host.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, userinfo_host),
    };
    let outage = Outage::start(host.to_string()).await;
    let proxied = match user {
        Some(user) => format!("postgres://{user}@{}/{rest}", outage.addr),
        None => format!("postgres://{}/{rest}", outage.addr),
    };
    let srv = server_with(&db, |c| c.database_url = proxied).await;
    let api = Api::of(&srv);
    let (code, ready) = api.get("/readyz").await;
    assert_eq!(
        (code, ready["status"].as_str()),
        (200, Some("ready")),
        "{ready}"
    );

    outage.cut();
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let (code, health) = api.get("/healthz").await;
        assert_eq!(code, 200, "{health}");
        assert!(
            started.elapsed() < std::time::Duration::from_millis(500),
            "/healthz took {:?}",
            started.elapsed()
        );
        let started = std::time::Instant::now();
        let (code, ready) = api.get("/api/readyz").await;
        let took = started.elapsed();
        assert_eq!(code, 503, "{ready}");
        assert_eq!(ready["error"]["status"], 503, "{ready}");
        assert!(
            took < std::time::Duration::from_millis(1800),
            "/readyz took {took:?}"
        );
    }

    // Requests that need the database are answered 503 with Retry-After once the pool gives
    // up (a few seconds), not held for long and then answered 500.
    for (method, path) in [
        ("GET", "/api/runs"),
        ("GET", "/metrics"),
        ("POST", "/api/runs"),
    ] {
        let started = std::time::Instant::now();
        let request = match method {
            "GET" => api.client.get(format!("{}{path}", api.base)),
            _ => api
                .client
                .post(format!("{}{path}", api.base))
                .json(&ga_run()),
        };
        let response = request.send().await.unwrap();
        let took = started.elapsed();
        let status = response.status().as_u16();
        let retry_after = response.headers().get("retry-after").cloned();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 503, "{method} {path}: {body}");
        assert!(retry_after.is_some(), "{method} {path}: no Retry-After");
        assert!(
            took < std::time::Duration::from_millis(4500),
            "{method} {path} took {took:?}"
        );
    }

    outage.restore();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if api.get("/readyz").await.0 == 200 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never ready again");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    srv.shutdown().await;
    db.drop_db().await;
}

/// The move and value `agent` answers for each position, over the API.
async fn answers(api: &Api, agent: &Value, positions: &[&str]) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for kpn in positions {
        let (code, body) = api
            .post("/api/move", json!({"agent": agent, "position": kpn}))
            .await;
        assert_eq!(code, 200, "{kpn}: {body}");
        out.push((body["move"].clone(), body["value"].clone()));
    }
    out
}

/// `kalah-tuner serve` with `env` set (and `RUST_LOG` unset unless `env` sets it), answered
/// as (child, base URL); its standard error goes to `log`.
fn spawn_server_logged(
    db: &TestDb,
    env: &[(&str, String)],
    log: &std::path::Path,
) -> (Server, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"));
    command
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--threads",
            "2",
            "--database-url",
            &db.url,
        ])
        .env_remove("RUST_LOG")
        .env_remove("KALAH_TUNER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log file"));
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("the server binary starts");
    let base = crate::support::listening_address(&mut child);
    (Server(child), base)
}

fn spawn_server_with_egdb(
    db: &TestDb,
    egdb_dir: &std::path::Path,
    log: &std::path::Path,
) -> (Server, String) {
    let env = [
        ("RUST_LOG", "kalah_tuner=info".to_string()),
        ("KALAH_TUNER_EGDB_DIR", egdb_dir.display().to_string()),
    ];
    spawn_server_logged(db, &env, log)
}

/// With the default log filter, answered requests write no line each (they are DEBUG), and
/// refused or failed ones write one at INFO.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_log_at_debug_and_refusals_at_info() {
    let db = sqlite_db();
    let dir = std::env::temp_dir().join(format!("kalah-log-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("serve.log");
    let (server, base) = spawn_server_logged(&db, &[], &log);
    let api = Api::new(base);
    for _ in 0..5 {
        assert_eq!(api.get("/api/runs").await.0, 200);
        assert_eq!(api.get("/healthz").await.0, 200);
    }
    assert_eq!(api.get("/api/no-such-route").await.0, 404);
    // The log is written as it goes; give the last line a moment.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    let requests: Vec<&str> = logged.lines().filter(|l| l.contains("status=")).collect();
    assert_eq!(requests.len(), 1, "{logged}");
    assert!(
        requests[0].contains("status=404")
            && requests[0].contains("INFO")
            && requests[0].contains("/api/no-such-route"),
        "{logged}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    db.drop_db().await;
}

/// With every connection of `--max-connections` (here its env) taken, the next one waits
/// and the log says why, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_connection_cap_is_logged() {
    let db = sqlite_db();
    let dir = std::env::temp_dir().join(format!("kalah-cap-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("serve.log");
    let env = [("KALAH_TUNER_MAX_CONNECTIONS", "2".to_string())];
    let (server, base) = spawn_server_logged(&db, &env, &log);
    let addr = base.strip_prefix("http://").unwrap().to_string();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let logged = loop {
        let logged = std::fs::read_to_string(&log).unwrap();
        if logged.contains("connection limit reached") || std::time::Instant::now() > deadline {
            break logged;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    drop(held);
    drop(server);
    assert_eq!(
        logged.matches("connection limit reached").count(),
        1,
        "{logged}"
    );
    assert!(logged.contains("WARN"), "{logged}");
    std::fs::remove_dir_all(&dir).unwrap();
    db.drop_db().await;
}

/// The endgame database a serving server's agents read is overwritten, then truncated, under
/// it: the server neither crashes (a truncated mapped file raised SIGBUS) nor changes an
/// answer (overwritten mapped entries changed them). A server started on the damaged file
/// says so in its log and plays without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_endgame_database_changes_no_answer_and_crashes_nothing() {
    use kalah_tuner::game::Rules;
    use kalah_tuner::search::egdb::{Egdb, Quiet};
    use std::io::{Seek, SeekFrom, Write};
    let dir = std::env::temp_dir().join(format!("kalah-egdb-serve-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(Egdb::file_name(4, 14, Rules::Standard));
    Egdb::build(4, 14, Rules::Standard, &Quiet)
        .unwrap()
        .write(&path)
        .unwrap();
    let db = sqlite_db();
    let log = dir.join("serve.log");
    let (server, base) = spawn_server_with_egdb(&db, &dir, &log);
    let api = Api::new(base);
    // Exact play from the database only: with none, these agents search one ply.
    let agent = json!({"kind": "perfect", "max_seeds": 0, "fallback_depth": 1, "egdb": true});
    let positions = [
        "1,2,0,3/10/2,0,1,1/8/S",
        "0,0,5,1/3/2,2,0,1/20/N",
        "3,1,1,0/12/0,4,0,2/7/S",
        "0,1,0,0/18/1,0,0,1/25/N",
        "2,2,2,1/5/2,2,1,2/5/S",
    ];
    let before = answers(&api, &agent, &positions).await;
    for (_, value) in &before {
        assert_eq!(value["unit"], "exact_margin", "{before:?}");
    }

    let len = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.seek(SeekFrom::Start(64)).unwrap();
    file.write_all(&vec![0x05u8; (len - 64) as usize]).unwrap();
    file.sync_all().unwrap();
    assert_eq!(
        answers(&api, &agent, &positions).await,
        before,
        "after the overwrite"
    );
    file.set_len(len / 3).unwrap();
    file.sync_all().unwrap();
    drop(file);
    assert_eq!(
        answers(&api, &agent, &positions).await,
        before,
        "after the truncation"
    );
    assert_eq!(api.get("/healthz").await.0, 200);
    drop(server);

    // Started on the damaged file: the log names it, and the agents play without it.
    let (server, base) = spawn_server_with_egdb(&db, &dir, &log);
    let api = Api::new(base);
    let after = answers(&api, &agent, &positions).await;
    assert!(
        after.iter().all(|(_, v)| v["unit"] != "exact_margin"),
        "{after:?}"
    );
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("endgame database") && logged.contains(path.to_str().unwrap()),
        "{logged}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    db.drop_db().await;
}

/// A GA run on Kalah(12,8) at depth 10: each of its games takes minutes, so its
/// server is in the middle of a game for as long as a test looks.
fn deep_run() -> Value {
    json!({"name": "deep", "config": {"population": 3, "depth": 10, "generations": 1, "seed": 5,
                                      "board": {"pits": 12, "seeds": 8},
                                      "benchmark": {"panel": []}}})
}

/// Processor time (user and system, all threads) that process `pid` has used so far.
fn cpu_time(pid: u32) -> std::time::Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the command name's closing parenthesis start with the third, the state;
    // utime and stime are the 14th and 15th.
    let after_name = &stat[stat.rfind(')').expect("a command name") + 1..];
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().expect("a tick count"))
        .collect();
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    std::time::Duration::from_millis((fields[0] + fields[1]) * 1000 / hz)
}

/// Waits until process `pid` has used a second of processor time more than now: its games
/// are under way. Gives up after two minutes (a hang guard, not a timing check).
async fn wait_busy(pid: u32) {
    let before = cpu_time(pid);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while cpu_time(pid) < before + std::time::Duration::from_secs(1) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never got busy"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Cancel and DELETE of a run in the middle of a depth-10 game on Kalah(12,8) free both cores
/// within 2 s: the stop reaches the searches inside the games, not only the next game. Over
/// the second after those 2 s the server uses less than a tenth of one core (two busy cores
/// would be 2 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_a_deep_run_frees_both_cores_within_2_s() {
    let db = sqlite_db();
    let (child, base) = spawn_server(&db);
    let pid = child.0.id();
    let api = Api::new(base);
    for stop in ["cancel", "delete"] {
        let run = api.create_run(deep_run()).await;
        let id = run["id"].as_str().unwrap().to_string();
        api.wait_status(&id, &["running"]).await;
        wait_busy(pid).await;
        let stopped_at = std::time::Instant::now();
        if stop == "cancel" {
            let (code, body) = api.post(&format!("/api/runs/{id}/cancel"), json!({})).await;
            assert_eq!(code, 200, "{body}");
        } else {
            assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
        }
        tokio::time::sleep_until((stopped_at + std::time::Duration::from_secs(2)).into()).await;
        let from = cpu_time(pid);
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let used = cpu_time(pid) - from;
        assert!(
            used < std::time::Duration::from_millis(100),
            "{stop}: {used:?} of processor time in the second after the first 2 s"
        );
    }
    drop(child);
    db.drop_db().await;
}

/// SIGTERM in the middle of a depth-10 game on Kalah(12,8) stops `serve` within 10 s, exit
/// 0, its run worker having stopped the games rather than been given up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_game_stops_serve_within_10_s() {
    let db = sqlite_db();
    let dir = std::env::temp_dir().join(format!("kalah-term-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("serve.log");
    let env = [("RUST_LOG", "kalah_tuner=info".to_string())];
    let (mut child, base) = spawn_server_logged(&db, &env, &log);
    let pid = child.0.id();
    let api = Api::new(base);
    let run = api.create_run(deep_run()).await;
    let id = run["id"].as_str().unwrap().to_string();
    api.wait_status(&id, &["running"]).await;
    wait_busy(pid).await;
    let started = std::time::Instant::now();
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let exit = child.0.wait().expect("reaped");
    let took = started.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(
        took < std::time::Duration::from_secs(10),
        "stopping took {took:?}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("stopped"), "{logged}");
    assert!(!logged.contains("did not stop in time"), "{logged}");
    drop(child);
    std::fs::remove_dir_all(&dir).unwrap();
    db.drop_db().await;
}
