//! Two `serve` processes on one database (SQLite and PostgreSQL) show the same things: the
//! database is the only state they share (docs/how-to/run-a-server.md, "Several servers on one database").
//!
//! - A run started on one is listed on the other at once, even right after that other cached
//!   its list, and the event streams of both servers carry each of its generations exactly
//!   once and end with its end.
//! - A tournament started on one shows its progress on the other while it plays, and is
//!   cancelled through the other.
//! - An SPRT test started on one is listed and watched (its pairs and LLR path growing) on the
//!   other, and cancelled through the other.
//! - SIGTERM of the server that plays a run, a tournament and an SPRT test loses nothing: the run finishes
//!   on the other exactly as an uninterrupted run, and the tournament reads as failed there at
//!   once, not as running forever.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{check_records, export, on_both_backends, reference_run, Api, TestDb};
use futures_util::StreamExt;
use serde_json::{json, Value};
use sqlx::Row;

/// A child server killed when a failing assertion unwinds past it.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// SIGTERM, then the time the process took to exit (cleanly: status 0).
    fn terminate(mut self) -> Duration {
        let started = Instant::now();
        // SAFETY: kill(2) on our own child's pid, which is not reaped before wait below.
        unsafe {
            libc::kill(self.0.id() as i32, libc::SIGTERM);
        }
        let status = self.0.wait().expect("the server exits");
        assert!(status.success(), "a clean stop exits 0: {status}");
        started.elapsed()
    }
}

/// `kalah-tuner serve` on a free port, one run worker on one game thread.
fn serve(db: &TestDb) -> (Proc, Api) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--threads",
            "1",
            "--database-url",
            &db.url,
        ])
        .env("RUST_LOG", "warn")
        .env_remove("KALAH_TUNER_TOKEN")
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the server binary starts");
    let base = crate::support::listening_address(&mut child);
    (Proc(child), Api::new(base))
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

/// A GA run of `generations` short generations (about 60 depth-3 games each).
fn run_body(generations: u32, seed: u64) -> Value {
    json!({"config": {"population": 4, "depth": 3, "generations": generations, "seed": seed,
                      "fitness": {"games_per_pair": 10},
                      "benchmark": {"pairs": 2, "panel": ["minimax:2"]}}})
}

/// A tournament of a minute or so on one game thread: 100 games of MCTS.
fn long_tournament(seed: u64) -> Value {
    json!({"agents": ["mcts:5000", "mcts:5000:1.0"], "games": 100, "seed": seed})
}

/// An SPRT test of equal players with narrow hypotheses: hundreds of pairs before a verdict.
fn long_sprt(seed: u64) -> Value {
    json!({"a": "minimax:4", "b": "minimax:4", "sprt": "0,2", "max_pairs": 2000, "seed": seed})
}

/// Polls `api` until the SPRT test satisfies `done`; a hang guard of `within`.
async fn sprt_until(api: &Api, id: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (code, t) = api.get(&format!("/api/sprt-tests/{id}")).await;
        assert_eq!(code, 200, "{t}");
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "SPRT test {id}: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One server's event stream of a run, read in the background into (event, data) pairs
/// until the server closes it.
fn watch(api: &Api, id: &str) -> tokio::task::JoinHandle<Vec<(String, Value)>> {
    let url = format!("{}/api/runs/{id}/events", api.base);
    let client = api.client.clone();
    tokio::spawn(async move {
        let response = client.get(url).send().await.expect("event stream");
        assert_eq!(response.status().as_u16(), 200);
        let mut body = response.bytes_stream();
        let (mut buffer, mut events) = (String::new(), Vec::new());
        while let Some(chunk) = body.next().await {
            let Ok(chunk) = chunk else { break };
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                let (mut event, mut data) = (String::new(), String::new());
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim().to_string();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if !event.is_empty() {
                    events.push((event, serde_json::from_str(&data).expect("JSON data")));
                }
            }
        }
        events
    })
}

/// A stream's events must be: the run as it was, then each later generation exactly once and
/// in order up to the last, and the run's end (`status` finished, then `end`).
fn check_stream(events: &[(String, Value)], total: u64, server: &str) {
    assert!(events.len() >= 3, "{server}: {events:?}");
    assert_eq!(events[0].0, "status", "{server}: {events:?}");
    let from = events[0].1["generations_done"].as_u64().expect("a count");
    let generations: Vec<u64> = events
        .iter()
        .filter(|(kind, _)| kind == "generation")
        .map(|(_, data)| data["generation"].as_u64().expect("a number"))
        .collect();
    assert_eq!(
        generations,
        (from..total).collect::<Vec<_>>(),
        "{server}: every generation after the first status, each once"
    );
    let n = events.len();
    assert_eq!(events[n - 2].0, "status", "{server}: {events:?}");
    assert_eq!(events[n - 2].1["status"], "finished", "{server}");
    assert_eq!(events[n - 1].0, "end", "{server}: {events:?}");
    assert_eq!(events[n - 1].1["status"], "finished", "{server}");
}

/// Polls `api` until the tournament satisfies `done`; a hang guard of `within`.
async fn tournament_until(
    api: &Api,
    id: &str,
    within: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (code, t) = api.get(&format!("/api/tournaments/{id}")).await;
        assert_eq!(code, 200, "{t}");
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "tournament {id}: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn two_servers_show_the_same(db: TestDb) {
    let (first, a) = serve(&db);
    let (second, b) = serve(&db);

    // B renders (and caches) its list before the run exists; A's run is listed by B at once.
    let (code, listed) = b.get("/api/runs").await;
    assert_eq!(code, 200);
    assert_eq!(listed["runs"], json!([]), "{listed}");
    let total = 8;
    let run = a.create_run(run_body(total as u32, 7)).await;
    let id = run["id"].as_str().expect("id").to_string();
    let (_, listed) = b.get("/api/runs").await;
    assert_eq!(listed["runs"][0]["id"], id.as_str(), "{listed}");

    // Both servers stream its generations, whichever of them runs it.
    let on_a = watch(&a, &id);
    let on_b = watch(&b, &id);
    let done = a.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    for (stream, server) in [(on_a, "A"), (on_b, "B")] {
        let events = tokio::time::timeout(Duration::from_secs(10), stream)
            .await
            .unwrap_or_else(|_| panic!("{server}'s stream did not end with the run"))
            .expect("stream reader");
        check_stream(&events, total, server);
    }
    // Finished on B's list too, not the queued copy it cached.
    let (_, listed) = b.get("/api/runs").await;
    assert_eq!(listed["runs"][0]["status"], "finished", "{listed}");

    // A tournament started on A shows its progress on B, and B cancels it.
    let (code, t) = a.post("/api/tournaments", long_tournament(3)).await;
    assert_eq!(code, 202, "{t}");
    let tid = t["id"].as_str().expect("id").to_string();
    let playing = tournament_until(&b, &tid, Duration::from_secs(60), |t| {
        t["progress"].as_f64().unwrap_or(0.0) > 0.0
    })
    .await;
    assert_eq!(playing["status"], "running", "{playing}");
    let (_, listed) = b.get("/api/tournaments").await;
    assert!(listed["tournaments"][0]["progress"].as_f64().unwrap_or(0.0) > 0.0);
    let (code, cancelled) = b
        .post(&format!("/api/tournaments/{tid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let (code, again) = a
        .post(&format!("/api/tournaments/{tid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 409, "{again}");
    // A stops playing it: its last write (the games it played) comes within seconds, and
    // nothing after.
    let stopped_at = Instant::now();
    let mut last = playing["progress"].as_f64().unwrap_or(0.0);
    let mut steady_since = Instant::now();
    while steady_since.elapsed() < Duration::from_secs(1) {
        let (_, t) = a.get(&format!("/api/tournaments/{tid}")).await;
        assert_eq!(t["status"], "cancelled", "{t}");
        let progress = t["progress"].as_f64().unwrap_or(0.0);
        if progress != last {
            last = progress;
            steady_since = Instant::now();
        }
        assert!(
            stopped_at.elapsed() < Duration::from_secs(15),
            "the cancelled tournament still plays on A"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(last < 0.99, "cancelled long before its end: {last}");

    // An SPRT test started on A is listed by B, watched on B while it plays, and B stops it.
    let (code, t) = a.post("/api/sprt-tests", long_sprt(5)).await;
    assert_eq!(code, 202, "{t}");
    let sid = t["id"].as_str().expect("id").to_string();
    let (_, listed) = b.get("/api/sprt-tests").await;
    assert_eq!(listed["tests"][0]["id"], sid.as_str(), "{listed}");
    assert!(listed["tests"][0].get("history").is_none(), "{listed}");
    let started = sprt_until(&b, &sid, Duration::from_secs(60), |t| {
        t["report"]["pairs"].as_u64().unwrap_or(0) > 0
    })
    .await;
    assert_eq!(started["status"], "running", "{started}");
    let seen = started["history"].as_array().map_or(0, Vec::len);
    let watched = sprt_until(&b, &sid, Duration::from_secs(60), |t| {
        t["history"].as_array().map_or(0, Vec::len) > seen
    })
    .await;
    assert!(
        watched["progress"].as_f64().unwrap_or(0.0) > 0.0,
        "{watched}"
    );
    assert_eq!(
        watched["history"]
            .as_array()
            .and_then(|h| h.last())
            .map(|p| &p["pairs"]),
        Some(&watched["report"]["pairs"]),
        "the LLR path ends at the report: {watched}"
    );
    let (code, cancelled) = b
        .post(&format!("/api/sprt-tests/{sid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled["finished_at"].is_string(), "{cancelled}");
    let (code, again) = a
        .post(&format!("/api/sprt-tests/{sid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 409, "{again}");
    // A stops playing it, and the stored test stays as the cancel left it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, on_a) = a.get(&format!("/api/sprt-tests/{sid}")).await;
    assert_eq!(on_a["status"], "cancelled", "{on_a}");
    assert_eq!(
        on_a["report"], cancelled["report"],
        "pairs went on after the stop"
    );
    assert!(
        on_a["report"]["pairs"].as_u64().unwrap_or(0) < 2000,
        "cancelled long before its end: {on_a}"
    );
    let (code, missing) = b.get("/api/sprt-tests/nope").await;
    assert_eq!(code, 404, "{missing}");

    // SIGTERM of the server that runs a run and plays a tournament: the other finishes the
    // run as if nothing happened, and shows the tournament failed at once.
    // Long enough (some 30 s) to still be running at the stop below on a quiet machine, after
    // the tournament and the SPRT test have started.
    let run = a.create_run(run_body(120, 8)).await;
    let id = run["id"].as_str().expect("id").to_string();
    a.wait_generations(&id, 2).await;
    let owner: String = sql_rows(&db, &format!("SELECT owner FROM runs WHERE id = '{id}'"))
        .await
        .first()
        .and_then(|r| r.try_get::<Option<String>, _>("owner").ok().flatten())
        .expect("the running run has an owner");
    let (owner_proc, owner_api, survivor_proc, survivor) =
        if owner.contains(&format!(":{}:", first.pid())) {
            (first, a, second, b)
        } else {
            assert!(owner.contains(&format!(":{}:", second.pid())), "{owner}");
            (second, b, first, a)
        };
    let (code, t) = owner_api.post("/api/tournaments", long_tournament(4)).await;
    assert_eq!(code, 202, "{t}");
    let tid = t["id"].as_str().expect("id").to_string();
    tournament_until(&survivor, &tid, Duration::from_secs(60), |t| {
        t["progress"].as_f64().unwrap_or(0.0) > 0.0
    })
    .await;
    let (code, t) = owner_api.post("/api/sprt-tests", long_sprt(6)).await;
    assert_eq!(code, 202, "{t}");
    let sid = t["id"].as_str().expect("id").to_string();
    // Shown running by the survivor (its games may wait for the owner's one game thread).
    sprt_until(&survivor, &sid, Duration::from_secs(10), |t| {
        t["status"] == "running"
    })
    .await;
    let on_survivor = watch(&survivor, &id);
    // Let the stream open before the stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let took = tokio::task::spawn_blocking(move || owner_proc.terminate())
        .await
        .expect("terminate");
    assert!(took < Duration::from_secs(10), "SIGTERM took {took:?}");
    let (code, t) = survivor.get(&format!("/api/tournaments/{tid}")).await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["status"], "failed", "{t}");
    assert!(t["error"].as_str().unwrap_or("").contains("stopped"), "{t}");
    let (code, t) = survivor.get(&format!("/api/sprt-tests/{sid}")).await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["status"], "failed", "{t}");
    assert!(t["error"].as_str().unwrap_or("").contains("stopped"), "{t}");
    let done = survivor.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    // Handed over: the stopped server gave the run back, and the survivor claimed it.
    let claim: i64 = sql_rows(&db, &format!("SELECT claim FROM runs WHERE id = '{id}'"))
        .await
        .first()
        .map(|r| r.get::<i64, _>("claim"))
        .expect("the run");
    assert_eq!(claim, 2, "the run ended before the stop: make it longer");
    let (_, records, reference) = reference_run(&run["config"]);
    check_records(&survivor, &id, &records).await;
    assert_eq!(export(&survivor, &id).await, reference);
    let events = tokio::time::timeout(Duration::from_secs(10), on_survivor)
        .await
        .expect("the survivor's stream ends with the run")
        .expect("stream reader");
    check_stream(&events, 120, "the survivor");

    drop(survivor_proc);
    db.drop_db().await;
}

on_both_backends!(
    two_servers_show_the_same(db):
    sqlite_two_servers_show_the_same,
    postgres_two_servers_show_the_same
);
