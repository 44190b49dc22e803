//! Shared by the server tests: fresh databases (a SQLite file in a temporary folder, or a
//! PostgreSQL database with a random name), servers on port 0, and small HTTP helpers.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use kalah_tuner::search::Budget;
use kalah_tuner::server::{start, RunningServer, ServerConfig};
use kalah_tuner::tune::GenerationRecord;
use kalah_tuner::tune::{Driver, StepControl, TunerConfig};
use serde_json::{json, Value};
use sqlx::Connection;

/// Env var with an admin URL of a PostgreSQL server on which tests may create databases.
pub const PG_ENV: &str = "KALAH_TUNER_TEST_PG_URL";

/// A database that only this test uses; `drop_db` removes it.
pub struct TestDb {
    pub url: String,
    pg: Option<(String, String)>,
    dir: Option<PathBuf>,
}

pub fn sqlite_db() -> TestDb {
    let dir = std::env::temp_dir().join(format!("kalah-tuner-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    TestDb {
        url: format!("sqlite://{}", dir.join("test.db").display()),
        pg: None,
        dir: Some(dir),
    }
}

/// A fresh PostgreSQL database, or `None` (with a notice) when no server is configured and
/// this is not CI. In CI (`CI=true`) a missing server fails the test.
pub async fn pg_db() -> Option<TestDb> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let admin = match std::env::var(PG_ENV) {
        Ok(url) if !url.is_empty() => url,
        _ if ci => panic!("{PG_ENV} is not set, but CI=true: the PostgreSQL tests must run"),
        _ => {
            eprintln!("notice: {PG_ENV} is not set: skipping the PostgreSQL test");
            return None;
        }
    };
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("connecting to PostgreSQL at {admin} ({PG_ENV}): {e}"));
    let name = format!("kalah_tuner_test_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut conn)
        .await
        .expect("CREATE DATABASE");
    conn.close().await.ok();
    // Same server and credentials, the new database.
    let base = match admin.rfind('/') {
        Some(i) if i > admin.find("://").map_or(0, |s| s + 2) => &admin[..i],
        _ => admin.as_str(),
    };
    let query = admin.find('?').map(|q| &admin[q..]).unwrap_or("");
    Some(TestDb {
        url: format!("{base}/{name}{query}"),
        pg: Some((admin.clone(), name)),
        dir: None,
    })
}

/// Defines one test on SQLite and one on PostgreSQL (skipped without a server, failed in CI)
/// of the same body, each on a fresh database, under the given names:
///
/// - `on_both_backends!(case(&db): sqlite_case, postgres_case);` runs `case(&db)` and drops
///   the database after it;
/// - `on_both_backends!(case(db): sqlite_case, postgres_case);` hands the database over, and
///   `case` drops it;
/// - `on_both_backends!(case(db, backend): sqlite_case, postgres_case);` also passes
///   `"sqlite"` or `"postgres"`.
///
/// More arguments may follow `&db` or `db` (`case(db, ga_run())`); attributes and doc comments
/// written inside the call, before `case`, go on both tests.
macro_rules! on_both_backends {
    ($(#[$attr:meta])* $body:ident(&db $(, $arg:expr)*): $sqlite:ident, $postgres:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            let db = $crate::support::sqlite_db();
            $body(&db $(, $arg)*).await;
            db.drop_db().await;
        }

        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(db) = $crate::support::pg_db().await else { return };
            $body(&db $(, $arg)*).await;
            db.drop_db().await;
        }
    };
    ($(#[$attr:meta])* $body:ident(db, backend): $sqlite:ident, $postgres:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $body($crate::support::sqlite_db(), "sqlite").await;
        }

        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(db) = $crate::support::pg_db().await else { return };
            $body(db, "postgres").await;
        }
    };
    ($(#[$attr:meta])* $body:ident(db $(, $arg:expr)*): $sqlite:ident, $postgres:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $sqlite() {
            $body($crate::support::sqlite_db() $(, $arg)*).await;
        }

        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            let Some(db) = $crate::support::pg_db().await else { return };
            $body(db $(, $arg)*).await;
        }
    };
}
pub(crate) use on_both_backends;

impl TestDb {
    pub async fn drop_db(self) {
        if let Some((admin, name)) = &self.pg {
            if let Ok(mut conn) = sqlx::PgConnection::connect(admin).await {
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await;
            }
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

pub async fn server(db: &TestDb, token: Option<&str>) -> RunningServer {
    server_with(db, |c| c.token = token.map(str::to_string)).await
}

/// A server on port 0 with the test defaults, changed by `adjust`.
pub async fn server_with(db: &TestDb, adjust: impl FnOnce(&mut ServerConfig)) -> RunningServer {
    let mut config = ServerConfig::new("127.0.0.1:0", db.url.clone());
    config.threads = Some(2);
    // No ladder games unless a test asks for them: they would take cores from the others.
    config.ladder.share = 0.0;
    adjust(&mut config);
    start(config).await.expect("server starts")
}

/// A folder of its own under the temporary folder, for files a test makes.
pub fn temp_folder(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kalah-tuner-{tag}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

/// Runs SQL on a test's database beside the server, as an operator (or another version of
/// the program) would.
pub async fn execute_sql(db: &TestDb, sql: &str) {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db.url).await.expect("database");
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(&pool)
        .await
        .expect("SQL");
    pool.close().await;
}

pub struct Api {
    pub base: String,
    pub client: reqwest::Client,
    pub token: Option<String>,
}

impl Api {
    pub fn new(base: String) -> Api {
        Api {
            base,
            client: reqwest::Client::new(),
            token: None,
        }
    }

    pub fn of(server: &RunningServer) -> Api {
        Api::new(format!("http://{}", server.addr))
    }

    fn auth(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("GET");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn post_raw(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let resp = self
            .auth(self.client.post(format!("{}{path}", self.base)))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("POST");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// POSTs a body larger than the server takes, over a plain connection: the server answers
    /// 413 from the declared length and closes, possibly while the body is still being sent,
    /// which would make an HTTP client report a broken pipe instead of the answer.
    pub async fn post_oversized(&self, path: &str, body: String) -> (u16, Value) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let host = self.base.trim_start_matches("http://").to_string();
        let mut socket = tokio::net::TcpStream::connect(&host)
            .await
            .expect("connect");
        let token = match &self.token {
            Some(t) => format!("Authorization: Bearer {t}\r\n"),
            None => String::new(),
        };
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             {token}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.expect("headers");
        // The server may stop reading at any point of the body: what matters is its answer.
        let _ = socket.write_all(body.as_bytes()).await;
        let mut answer = Vec::new();
        let _ =
            tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
        let text = String::from_utf8_lossy(&answer).to_string();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        let json = text.split("\r\n\r\n").nth(1).unwrap_or("");
        let json = json.find('{').map_or("", |i| &json[i..]);
        let json = json.rfind('}').map_or("", |i| &json[..=i]);
        (
            status,
            serde_json::from_str(json).unwrap_or(Value::String(text.clone())),
        )
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.post_raw(path, body.to_string()).await
    }

    /// A request with the given headers (and no others but the token's), answered as
    /// (status, headers, body).
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut rb = self.auth(self.client.request(method, format!("{}{path}", self.base)));
        for (name, value) in headers {
            rb = rb.header(*name, *value);
        }
        if let Some(body) = body {
            rb = rb.body(body);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        (
            status,
            headers,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn delete(&self, path: &str) -> u16 {
        self.auth(self.client.delete(format!("{}{path}", self.base)))
            .send()
            .await
            .expect("DELETE")
            .status()
            .as_u16()
    }

    /// Creates a run and returns its object.
    pub async fn create_run(&self, body: Value) -> Value {
        let (status, run) = self.post("/api/runs", body).await;
        assert_eq!(status, 201, "{run}");
        run
    }

    /// Polls until the run has one of `statuses`; gives up after two minutes (a hang guard,
    /// not a timing check).
    pub async fn wait_status(&self, id: &str, statuses: &[&str]) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (code, run) = self.get(&format!("/api/runs/{id}")).await;
            assert_eq!(code, 200, "{run}");
            if statuses.contains(&run["status"].as_str().unwrap_or("")) {
                return run;
            }
            assert!(
                Instant::now() < deadline,
                "run {id} never reached {statuses:?}: {run}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Polls until the run has written at least `n` generations.
    pub async fn wait_generations(&self, id: &str, n: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (_, run) = self.get(&format!("/api/runs/{id}")).await;
            if run["generations_done"].as_u64().unwrap_or(0) >= n
                || run["status"] != json!("running") && run["status"] != json!("queued")
            {
                return run;
            }
            assert!(Instant::now() < deadline, "run {id} stalled: {run}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The run a config of any tuner gives without any server: the reference for exports and
/// records.
pub fn reference_run(config: &Value) -> (TunerConfig, Vec<GenerationRecord>, Value) {
    let config: TunerConfig = serde_json::from_value(config.clone()).expect("config");
    let mut driver = Driver::open(config.clone(), None).expect("valid config");
    let mut records: Vec<GenerationRecord> = Vec::new();
    driver
        .run(&StepControl::new(Budget::unlimited()), &mut [&mut records])
        .expect("runs");
    let doc = config.export(&records).expect("export");
    let doc: Value = serde_json::from_str(&doc.to_json_pretty()).expect("json");
    (config, records, doc)
}

/// A record as JSON without its wall time.
pub fn without_timing(mut record: Value) -> Value {
    if let Some(map) = record.as_object_mut() {
        map.remove("timing");
        map.remove("features");
        map.remove("run_id");
    }
    record
}

/// Waits for run `id` to end, and checks that it finished with exactly the records and
/// export of `config` run without a server.
pub async fn check_finishes_as_uninterrupted(api: &Api, id: &str, config: &Value) {
    let done = api.wait_status(id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    let (_, records, reference) = reference_run(config);
    check_records(api, id, &records).await;
    assert_eq!(export(api, id).await, reference);
}

/// The server's records of a run must be the reference records, each once, in order.
pub async fn check_records(api: &Api, id: &str, reference: &[GenerationRecord]) {
    let (code, gens) = api.get(&format!("/api/runs/{id}/generations")).await;
    assert_eq!(code, 200);
    let numbers: Vec<u64> = gens["generations"]
        .as_array()
        .expect("list")
        .iter()
        .map(|g| g["generation"].as_u64().expect("number"))
        .collect();
    let expected: Vec<u64> = (0..reference.len() as u64).collect();
    assert_eq!(numbers, expected, "every generation exactly once");
    for r in reference {
        let (code, got) = api
            .get(&format!("/api/runs/{id}/generations/{}", r.generation))
            .await;
        assert_eq!(code, 200, "{got}");
        let want = serde_json::to_value(r.without_timing()).expect("json");
        assert_eq!(
            without_timing(got),
            without_timing(want),
            "generation {}",
            r.generation
        );
    }
}

pub async fn export(api: &Api, id: &str) -> Value {
    let (code, doc) = api.get(&format!("/api/runs/{id}/export")).await;
    assert_eq!(code, 200, "{doc}");
    doc
}

/// Reads the first line a `kalah-tuner serve` child prints on its piped standard output and
/// returns the address in it.
pub fn listening_address(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server prints its address");
    address_in(&line)
}

/// The address in `serve`'s first line.
pub fn address_in(line: &str) -> String {
    line.trim()
        .strip_prefix("kalah-tuner listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}
