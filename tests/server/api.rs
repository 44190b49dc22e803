//! The HTTP API against a real server on port 0, on SQLite and on PostgreSQL (set
//! KALAH_TUNER_TEST_PG_URL; `.ci/run` does). Runs are tiny so the suite stays fast.

use std::time::Duration;

use crate::support::{
    check_finishes_as_uninterrupted, check_records, execute_sql, export, on_both_backends,
    reference_run, server, server_with, sqlite_db, temp_folder, Api, TestDb,
};
use futures_util::StreamExt;
use serde_json::{json, Value};

/// A small run: 4 individuals at depth 1, `generations` generations.
fn tiny(generations: u32, seed: u64) -> Value {
    json!({"population": 4, "depth": 1, "generations": generations, "seed": seed})
}

/// Create, watch to the end, read the curve, a generation and the export; list and show.
async fn lifecycle(api: &Api, backend: &str) {
    let (code, health) = api.get("/api/healthz").await;
    assert_eq!(code, 200);
    assert_eq!(health["database"], backend);
    assert_eq!(api.get("/healthz").await.1["status"], "ok");
    for path in ["/readyz", "/api/readyz"] {
        let (code, ready) = api.get(path).await;
        assert_eq!(code, 200, "{ready}");
        assert_eq!(ready, json!({"status": "ready", "database": backend}));
    }

    let run = api
        .create_run(json!({"preset": "abrams", "config": tiny(5, 3), "name": "first"}))
        .await;
    let id = run["id"].as_str().unwrap().to_string();
    assert_eq!(run["preset"], "abrams");
    assert_eq!(run["name"], "first");
    assert_eq!(run["generations_total"], 5);
    assert_eq!(run["seed"], 3);
    assert_eq!(
        run["features"],
        json!(["store_diff", "side_diff", "overflow_diff"])
    );
    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["generations_done"], 5);
    assert_eq!(done["progress"], 1.0);
    assert_eq!(done["stop_reason"], "generations");
    assert!(done["best_fitness"].as_f64().unwrap() > 0.0);
    assert!(done["started_at"].is_string() && done["finished_at"].is_string());
    // Its processor time is measured on its game threads: something, and no more than a
    // short run can use.
    let processor = done["processor_seconds"].as_f64().unwrap_or(-1.0);
    assert!(processor > 0.0 && processor < 120.0, "{done}");

    // The same run without the server gives the same records and export.
    let (_, records, reference) = reference_run(&run["config"]);
    check_records(api, &id, &records).await;
    assert_eq!(export(api, &id).await, reference);
    // The champion, the export, the run's best weights and run:ID are one player.
    let (_, last) = api.get(&format!("/api/runs/{id}/generations/4")).await;
    let (_, row) = api.get(&format!("/api/runs/{id}")).await;
    assert_eq!(reference["weights"], last["champion"]["weights"], "{last}");
    assert_eq!(row["best_weights"], reference["weights"]);
    for seed in 0..4 {
        let position = "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S";
        let (_, by_run) = api
            .post(
                "/api/move",
                json!({"agent": format!("run:{id}"), "position": position, "seed": seed}),
            )
            .await;
        let (_, by_export) = api
            .post(
                "/api/move",
                json!({"agent": reference["agent"], "position": position, "seed": seed}),
            )
            .await;
        assert_eq!(by_run["move"], by_export["move"]);
        assert_eq!(by_run["value"], by_export["value"]);
    }

    let resp = api
        .client
        .get(format!("{}/api/runs/{id}/export", api.base))
        .send()
        .await
        .unwrap();
    let disposition = resp.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        disposition,
        format!("attachment; filename=\"kalah-tuner-{id}.json\"")
    );

    let (_, gens) = api
        .get(&format!("/api/runs/{id}/generations?since=2"))
        .await;
    let g: Vec<u64> = gens["generations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(g, vec![3, 4]);
    assert_eq!(gens["run_id"], id.as_str());
    let first = &gens["generations"][0];
    for key in [
        "best",
        "mean",
        "min",
        "std",
        "diversity",
        "best_so_far",
        "games_played",
        "wall_ms",
    ] {
        assert!(first[key].is_number(), "{key} in {first}");
    }
    assert_eq!(first["best_weights"].as_array().unwrap().len(), 3);

    let (_, g0) = api.get(&format!("/api/runs/{id}/generations/0")).await;
    assert_eq!(g0["individuals"].as_array().unwrap().len(), 4);
    assert_eq!(g0["features"].as_array().unwrap().len(), 3);
    assert!(g0["fitness"]["best"].is_number() && g0["hall_of_fame"].is_object());
    assert!(g0["timing"]["wall_ms"].is_number());
    assert_eq!(
        api.get(&format!("/api/runs/{id}/generations/9")).await.0,
        404
    );

    // Newest first.
    let second = api.create_run(json!({"config": tiny(2, 1)})).await;
    let (_, list) = api.get("/api/runs").await;
    let ids: Vec<&str> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![second["id"].as_str().unwrap(), id.as_str()]);
    api.wait_status(second["id"].as_str().unwrap(), &["finished"])
        .await;

    // Finished runs can be neither cancelled nor resumed; deleting works once.
    assert_eq!(
        api.post(&format!("/api/runs/{id}/cancel"), json!({}))
            .await
            .0,
        409
    );
    assert_eq!(
        api.post(&format!("/api/runs/{id}/resume"), json!({}))
            .await
            .0,
        409
    );
    assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
    assert_eq!(api.get(&format!("/api/runs/{id}")).await.0, 404);
    assert_eq!(api.get(&format!("/api/runs/{id}/generations")).await.0, 404);
    assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 404);
}

/// Reads server-sent events as (event, data) pairs.
struct Events {
    stream: std::pin::Pin<
        Box<dyn futures_util::Stream<Item = reqwest::Result<bytes_alias::Bytes>> + Send>,
    >,
    buffer: String,
}

mod bytes_alias {
    pub use axum::body::Bytes;
}

impl Events {
    async fn open(api: &Api, id: &str) -> Events {
        Events::open_path(api, &format!("/api/runs/{id}/events")).await
    }

    async fn open_path(api: &Api, path: &str) -> Events {
        let resp = api
            .client
            .get(format!("{}{path}", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert!(resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"));
        Events {
            stream: Box::pin(resp.bytes_stream()),
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> (String, Value) {
        self.next_or_close(Duration::from_secs(120))
            .await
            .expect("the stream stays open")
    }

    /// The next event, or `None` once the server has closed the stream; panics when neither
    /// comes within `wait`.
    async fn next_or_close(&mut self, wait: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim().to_string();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if event.is_empty() {
                    continue; // keep-alive comment
                }
                return Some((event, serde_json::from_str(&data).unwrap()));
            }
            let chunk = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .unwrap_or_else(|_| panic!("neither an event nor the end within {wait:?}"));
            match chunk {
                Some(chunk) => self
                    .buffer
                    .push_str(&String::from_utf8_lossy(&chunk.unwrap())),
                None => {
                    assert!(
                        self.buffer.trim().is_empty(),
                        "a cut event: {}",
                        self.buffer
                    );
                    return None;
                }
            }
        }
    }

    /// Every event until the server closes the stream, which must be within `wait`.
    async fn until_close(&mut self, wait: Duration) -> Vec<(String, Value)> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut events = Vec::new();
        while let Some(event) = self
            .next_or_close(deadline.saturating_duration_since(tokio::time::Instant::now()))
            .await
        {
            events.push(event);
        }
        events
    }
}

/// NUL and the bidirectional overrides and isolates are refused with 422 naming the field in
/// every text a request may store (PostgreSQL answered 500 for a NUL before), and nothing is
/// stored.
async fn text_refuses_nul_and_bidi_controls(db: &TestDb) {
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let run = api
        .create_run(json!({"config": tiny(1, 41), "name": "kept"}))
        .await;
    let id = run["id"].as_str().unwrap().to_string();
    let before = api.get(&format!("/api/runs/{id}")).await.1;
    let bad_chars = [
        '\0', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}',
    ];
    for c in bad_chars {
        let text = format!("admin{c}txt.exe");
        let code = format!("U+{:04X}", u32::from(c));
        let refused = |(status, body): (u16, Value), field: &str| {
            assert_eq!(status, 422, "{code} in {field}: {body}");
            assert_eq!(body["error"]["status"], 422, "{body}");
            assert_eq!(body["error"]["field"], field, "{body}");
            let message = body["error"]["message"].as_str().unwrap_or("");
            assert!(message.contains(&code), "{message}");
        };
        refused(
            api.post("/api/runs", json!({"config": tiny(1, 42), "name": text}))
                .await,
            "name",
        );
        let opponents = json!({"mode": "opponents", "opponents": ["greedy", text]});
        refused(
            api.post(
                "/api/runs",
                json!({"config": {"population": 4, "fitness": opponents}}),
            )
            .await,
            "config.fitness.opponents[1]",
        );
        for (body, field) in [
            (json!({"name": text}), "name"),
            (json!({"notes": text}), "notes"),
            (json!({"tags": ["fine", text]}), "tags[1]"),
        ] {
            let (status, _, answer) = api
                .send(
                    reqwest::Method::PATCH,
                    &format!("/api/runs/{id}"),
                    &[("content-type", "application/json")],
                    Some(body.to_string()),
                )
                .await;
            refused((status, answer), field);
        }
        refused(
            api.post(
                "/api/tournaments",
                json!({"agents": ["random", "greedy"], "games": 2,
                       "names": ["the random one", text]}),
            )
            .await,
            "names[1]",
        );
    }
    let (_, runs) = api.get("/api/runs").await;
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(1), "{runs}");
    let (_, tournaments) = api.get("/api/tournaments").await;
    assert_eq!(
        tournaments["tournaments"].as_array().map(Vec::len),
        Some(0),
        "{tournaments}"
    );
    let after = api.get(&format!("/api/runs/{id}")).await.1;
    for key in ["name", "notes", "tags"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    // Right-to-left text itself is welcome.
    let (status, _, renamed) = api
        .send(
            reqwest::Method::PATCH,
            &format!("/api/runs/{id}"),
            &[("content-type", "application/json")],
            Some(
                json!({"name": "\u{05e9}\u{05dc}\u{05d5}\u{05dd}", "notes": "a\u{200F}b"})
                    .to_string(),
            ),
        )
        .await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(renamed["name"], "\u{05e9}\u{05dc}\u{05d5}\u{05dd}");

    // A NUL in an id names nothing: 404 on every backend (PostgreSQL refused the text with a
    // server error), and 422 in the run list of an event stream.
    for path in [
        "/api/tournaments/%00",
        "/api/sprt-tests/%00",
        "/api/runs/%00",
    ] {
        let (status, body) = api.get(path).await;
        assert_eq!(status, 404, "GET {path}: {body}");
        let cancel = format!("{path}/cancel");
        let (status, body) = api.post(&cancel, json!({})).await;
        assert_eq!(status, 404, "POST {cancel}: {body}");
    }
    let (status, body) = api.get("/api/events?runs=%00").await;
    assert_eq!(
        error_of(status, &body),
        (422, Some("runs".into())),
        "{body}"
    );
    srv.shutdown().await;
}

on_both_backends!(
    text_refuses_nul_and_bidi_controls(&db):
    sqlite_text_refuses_nul_and_bidi_controls,
    postgres_text_refuses_nul_and_bidi_controls
);

/// Sends `request` on a new connection and reads until the server closes it or `wait` passes:
/// (what arrived, whether the server closed the connection).
async fn raw_exchange(
    addr: std::net::SocketAddr,
    request: &[u8],
    wait: Duration,
) -> (String, bool) {
    use tokio::io::AsyncWriteExt;
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request).await.expect("write");
    read_until_close(&mut tcp, wait).await
}

async fn read_until_close(tcp: &mut tokio::net::TcpStream, wait: Duration) -> (String, bool) {
    use tokio::io::AsyncReadExt;
    let deadline = tokio::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), false),
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// The JSON error body of a raw HTTP answer.
fn raw_error(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|_| panic!("a JSON body: {answer}"))
}

/// A slow or idle client is cut off, a request declaring too large a body is refused at
/// once, and connections past the cap wait for one to close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_limits_hold_slow_idle_and_greedy_clients() {
    use tokio::io::AsyncWriteExt;
    let db = sqlite_db();
    let srv = server_with(&db, |c| {
        c.limits.header_read = Duration::from_millis(800);
        c.limits.body_read = Duration::from_millis(800);
    })
    .await;
    let addr = srv.addr;
    let second = Duration::from_secs(1);

    // Half a header, then silence: closed after the header-read timeout.
    let started = std::time::Instant::now();
    let (_, closed) = raw_exchange(
        addr,
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n",
        4 * second,
    )
    .await;
    assert!(closed, "a half-sent header keeps its connection");
    assert!(started.elapsed() < 3 * second, "{:?}", started.elapsed());

    // Nothing at all: the same.
    let (_, closed) = raw_exchange(addr, b"", 4 * second).await;
    assert!(closed, "a silent connection stays open");

    // Idle after an answer: closed too.
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let (answer, closed) = read_until_close(&mut tcp, 4 * second).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed, "an idle keep-alive connection stays open");

    // A body that stops half-way: 408 in the API's shape once the body's time is up.
    let started = std::time::Instant::now();
    let (answer, _) = raw_exchange(
        addr,
        b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":",
        4 * second,
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(raw_error(&answer)["error"]["status"], 408, "{answer}");
    assert!(started.elapsed() < 3 * second, "{:?}", started.elapsed());

    // Content-Length over the limit: 413 at once, the body never sent.
    let started = std::time::Instant::now();
    let (answer, _) = raw_exchange(
        addr,
        b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1048577\r\n\r\n",
        4 * second,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(700),
        "{:?}",
        started.elapsed()
    );
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{answer}"
    );
    let error = raw_error(&answer);
    assert_eq!(error["error"]["status"], 413, "{answer}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1048577"),
        "{answer}"
    );
    // At the limit exactly, the body is read as usual (and found to be no run request).
    let (code, body) = Api::of(&srv)
        .post_raw("/api/runs", " ".repeat(1 << 20))
        .await;
    assert_eq!(code, 400, "{body}");

    srv.shutdown().await;

    // Three connections at most: a fourth is answered only once one of them closes.
    let srv = server_with(&db, |c| c.limits.max_connections = 3).await;
    let addr = srv.addr;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        held.push(tcp);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut fourth = tokio::net::TcpStream::connect(addr).await.unwrap();
    fourth
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = read_until_close(&mut fourth, Duration::from_millis(300)).await;
    assert_eq!(answer, "", "a connection past the cap was served");
    drop(held.pop());
    let (answer, _) = read_until_close(&mut fourth, 4 * second).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    srv.shutdown().await;
    db.drop_db().await;
}

/// Opens `n` connections to `addr` from the loopback address `from` (a peer of its own).
async fn connections_from(
    from: std::net::Ipv4Addr,
    addr: std::net::SocketAddr,
    n: usize,
) -> Vec<tokio::net::TcpStream> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((from, 0).into()).unwrap();
        // A connection refused or closed at once (the peer holds too many) is left out.
        if let Ok(Ok(tcp)) =
            tokio::time::timeout(Duration::from_secs(5), socket.connect(addr)).await
        {
            out.push(tcp);
        }
    }
    out
}

/// A client of its own (127.0.0.1) reads the run list: how long it waits for the answer.
async fn new_client_waits(api: &Api) -> Duration {
    let started = std::time::Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(30), api.get("/api/runs")).await;
    let took = started.elapsed();
    let (code, body) = answer.unwrap_or_else(|_| panic!("no answer in 30 s"));
    assert_eq!(code, 200, "{body}");
    took
}

/// One peer cannot lock everyone out: with 5,000 idle connections, 600 slowloris
/// connections (a byte a second) or 600 event streams held from one address, a client at
/// another address is answered within 2 s. The peer gets its share (64 connections) and is
/// answered 503 for more; event streams are capped below the connections, 503 past it.
async fn a_crowd_from_one_peer_leaves_room_for_others(db: &TestDb) {
    use tokio::io::AsyncWriteExt;
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let addr = srv.addr;
    let crowd = std::net::Ipv4Addr::new(127, 0, 0, 2);
    let limit = Duration::from_secs(2);

    // 5,000 idle connections.
    let idle = connections_from(crowd, addr, 5000).await;
    let took = new_client_waits(&api).await;
    assert!(took < limit, "idle crowd: the new client waited {took:?}");
    // Past its share, the crowd is told so and closed.
    let mut extra = connections_from(crowd, addr, 1).await;
    if let Some(tcp) = extra.first_mut() {
        let (answer, closed) = read_until_close(tcp, Duration::from_secs(3)).await;
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("retry-after"),
            "{answer}"
        );
        assert_eq!(raw_error(&answer)["error"]["status"], 503, "{answer}");
        assert!(closed);
    }
    drop(idle);
    drop(extra);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // 600 slowloris connections: a header a byte at a time.
    let slow = connections_from(crowd, addr, 600).await;
    let dripping: Vec<_> = slow
        .into_iter()
        .map(|mut tcp| {
            tokio::spawn(async move {
                for byte in b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaa" {
                    if tcp.write_all(&[*byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let took = new_client_waits(&api).await;
    assert!(
        took < limit,
        "slowloris crowd: the new client waited {took:?}"
    );
    for task in dripping {
        task.abort();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    // 600 event streams.
    let streams = connections_from(crowd, addr, 600).await;
    let mut open = Vec::new();
    for mut tcp in streams {
        let asked = tcp
            .write_all(
                b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
            )
            .await;
        if asked.is_ok() {
            open.push(tcp);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let took = new_client_waits(&api).await;
    assert!(
        took < limit,
        "event-stream crowd: the new client waited {took:?}"
    );
    // The new client may open a stream of its own, too.
    let response = api
        .client
        .get(format!("{}/api/events", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    drop(response);
    drop(open);
    srv.shutdown().await;

    // Event streams past the server's cap: 503 with Retry-After, for anyone.
    let srv = server_with(db, |c| c.limits.max_event_streams = 2).await;
    let api = Api::of(&srv);
    let mut held = Vec::new();
    for _ in 0..2 {
        let response = api
            .client
            .get(format!("{}/api/events", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        held.push(response);
    }
    let (code, headers, body) = api
        .send(reqwest::Method::GET, "/api/events", &[], None)
        .await;
    assert_eq!(code, 503, "{body}");
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    // A closed stream gives its seat back (at the latest when its next keep-alive fails).
    drop(held.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        let response = api
            .client
            .get(format!("{}/api/events", api.base))
            .send()
            .await
            .unwrap();
        if response.status().as_u16() == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the seat never came back"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    drop(held);
    srv.shutdown().await;
}

on_both_backends!(
    a_crowd_from_one_peer_leaves_room_for_others(&db):
    sqlite_a_crowd_from_one_peer_leaves_room_for_others,
    postgres_a_crowd_from_one_peer_leaves_room_for_others
);

/// A run long enough to still be running when a test acts on it (cancel, delete).
fn long_config(seed: u64) -> Value {
    json!({"population": 6, "depth": 4, "generations": 50, "seed": seed,
           "fitness": {"games_per_pair": 10}})
}

/// An event stream ends with an `end` event and closes when its run ends (finished,
/// cancelled, deleted, failed by another process), and at once for a run that already has.
async fn event_streams_end_with_their_run(db: &TestDb) {
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let last_two = |events: &[(String, Value)]| -> (Value, Value) {
        let n = events.len();
        assert!(n >= 2, "{events:?}");
        assert_eq!(events[n - 2].0, "status", "{events:?}");
        assert_eq!(events[n - 1].0, "end", "{events:?}");
        (events[n - 2].1.clone(), events[n - 1].1.clone())
    };

    // A run that finishes while watched: queued behind a long run that holds the one worker
    // until the stream is open.
    let first = api.create_run(json!({"config": long_config(30)})).await;
    let first_id = first["id"].as_str().unwrap().to_string();
    api.wait_status(&first_id, &["running"]).await;
    let run = api.create_run(json!({"config": tiny(2, 21)})).await;
    let id = run["id"].as_str().unwrap().to_string();
    let mut events = Events::open(&api, &id).await;
    assert_eq!(events.next().await.1["status"], "queued");
    let (code, body) = api
        .post(&format!("/api/runs/{first_id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{body}");
    let seen = events.until_close(Duration::from_secs(120)).await;
    let (status, end) = last_two(&seen);
    assert_eq!(status["status"], "finished", "{seen:?}");
    assert_eq!(end, json!({"run_id": id, "status": "finished"}));
    assert_eq!(
        seen.iter().filter(|(k, _)| k == "generation").count(),
        2,
        "{seen:?}"
    );

    // Already finished: the run and the end at once.
    let started = std::time::Instant::now();
    let mut events = Events::open(&api, &id).await;
    let seen = events.until_close(Duration::from_secs(2)).await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(last_two(&seen).1["status"], "finished");
    assert!(started.elapsed() < Duration::from_secs(2));

    // Cancelled while watched, then watched again once cancelled.
    let long = api.create_run(json!({"config": long_config(31)})).await;
    let long_id = long["id"].as_str().unwrap().to_string();
    api.wait_status(&long_id, &["running"]).await;
    let mut events = Events::open(&api, &long_id).await;
    assert_eq!(events.next().await.0, "status");
    let (code, body) = api
        .post(&format!("/api/runs/{long_id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{body}");
    let seen = events.until_close(Duration::from_secs(10)).await;
    let (status, end) = last_two(&seen);
    assert_eq!(status["status"], "cancelled");
    assert_eq!(end["status"], "cancelled");
    let mut events = Events::open(&api, &long_id).await;
    let seen = events.until_close(Duration::from_secs(2)).await;
    assert_eq!(last_two(&seen).1["status"], "cancelled", "{seen:?}");

    // Failed: at once when it already has, and by another process (the database changes
    // under this one, which broadcasts nothing) within the stream's recheck.
    execute_sql(
        db,
        &format!("UPDATE runs SET status = 'failed', error = 'test' WHERE id = '{long_id}'"),
    )
    .await;
    let mut events = Events::open(&api, &long_id).await;
    let seen = events.until_close(Duration::from_secs(2)).await;
    assert_eq!(last_two(&seen).1["status"], "failed", "{seen:?}");
    // The holder must still be running at the deletion below, after the waits above: far
    // longer than `long_config`, which a loaded machine can finish first.
    let holder = api
        .create_run(
            json!({"config": {"population": 8, "depth": 4, "generations": 2000,
                           "seed": 32, "fitness": {"games_per_pair": 10}}}),
        )
        .await;
    let holder_id = holder["id"].as_str().unwrap().to_string();
    api.wait_status(&holder_id, &["running"]).await;
    let waiting = api.create_run(json!({"config": tiny(2, 33)})).await;
    let waiting_id = waiting["id"].as_str().unwrap().to_string();
    let mut events = Events::open(&api, &waiting_id).await;
    assert_eq!(events.next().await.1["status"], "queued");
    execute_sql(
        db,
        &format!("UPDATE runs SET status = 'failed', error = 'test' WHERE id = '{waiting_id}'"),
    )
    .await;
    let seen = events.until_close(Duration::from_secs(15)).await;
    assert_eq!(last_two(&seen).1["status"], "failed", "{seen:?}");

    // Deleted while watched.
    let mut events = Events::open(&api, &holder_id).await;
    let (kind, status) = events.next().await;
    assert_eq!(
        (kind.as_str(), &status["status"]),
        ("status", &json!("running"))
    );
    assert_eq!(api.delete(&format!("/api/runs/{holder_id}")).await, 204);
    let seen = events.until_close(Duration::from_secs(5)).await;
    assert_eq!(
        seen.last().cloned(),
        Some((
            "end".to_string(),
            json!({"run_id": holder_id, "status": "deleted"})
        )),
        "{seen:?}"
    );
    srv.shutdown().await;
}

on_both_backends!(
    event_streams_end_with_their_run(&db):
    sqlite_event_streams_end_with_their_run,
    postgres_event_streams_end_with_their_run
);

/// `/api/events`: one stream for many runs (a browser's dashboard holds one for all its tabs).
/// Each run named gets its state first; events of other runs are left out; the stream stays
/// open when a run ends and tells of a deletion with an `end` naming the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_one_event_stream_follows_many_runs() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let holder = api.create_run(json!({"config": long_config(40)})).await;
    let holder_id = holder["id"].as_str().unwrap().to_string();
    api.wait_status(&holder_id, &["running"]).await;
    let queued = api.create_run(json!({"config": tiny(2, 41)})).await;
    let queued_id = queued["id"].as_str().unwrap().to_string();
    let other = api.create_run(json!({"config": tiny(2, 42)})).await;
    let other_id = other["id"].as_str().unwrap().to_string();
    let missing = "00000000-0000-7000-8000-000000000000";
    let mut events = Events::open_path(
        &api,
        &format!("/api/events?runs={holder_id},{queued_id},{missing}"),
    )
    .await;
    // The runs named, each once, in some order: two states and the end of the missing one.
    let mut first = Vec::new();
    for _ in 0..3 {
        first.push(events.next().await);
    }
    let status_of = |id: &str| {
        first
            .iter()
            .find(|(k, d)| k == "status" && d["id"] == id)
            .map(|(_, d)| d["status"].clone())
    };
    assert_eq!(status_of(&holder_id), Some(json!("running")), "{first:?}");
    assert_eq!(status_of(&queued_id), Some(json!("queued")), "{first:?}");
    assert!(
        first
            .iter()
            .any(|(k, d)| k == "end" && *d == json!({"run_id": missing, "status": "deleted"})),
        "{first:?}"
    );
    // The holder is cancelled: its status and end come, the queued run starts and finishes,
    // and the stream is still open after both; nothing of the third run comes.
    let (code, body) = api
        .post(&format!("/api/runs/{holder_id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{body}");
    let mut ends = Vec::new();
    while ends.len() < 2 {
        let (kind, data) = events.next().await;
        let run = data["run_id"]
            .as_str()
            .or(data["id"].as_str())
            .unwrap_or_default()
            .to_string();
        assert_ne!(
            run, other_id,
            "an event of a run not asked for: {kind} {data}"
        );
        if kind == "end" {
            ends.push((run, data["status"].clone()));
        }
    }
    assert!(
        ends.contains(&(holder_id.clone(), json!("cancelled"))),
        "{ends:?}"
    );
    assert!(
        ends.contains(&(queued_id.clone(), json!("finished"))),
        "{ends:?}"
    );
    // Every run: the third's events come too, its end as it finishes, and after its deletion
    // an `end` that says so.
    let mut all = Events::open_path(&api, "/api/events").await;
    api.wait_status(&other_id, &["finished"]).await;
    assert_eq!(api.delete(&format!("/api/runs/{other_id}")).await, 204);
    let mut other_ends = Vec::new();
    while other_ends.last() != Some(&json!("deleted")) {
        let (kind, data) = all.next().await;
        if kind == "end" && data["run_id"] == other_id.as_str() {
            other_ends.push(data["status"].clone());
        }
    }
    assert!(other_ends.len() <= 2, "{other_ends:?}");
    // Too many ids are refused, naming the field.
    let many = (0..501)
        .map(|i| format!("r{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let (code, body) = api.get(&format!("/api/events?runs={many}")).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["error"]["field"], "runs", "{body}");
    srv.shutdown().await;
    db.drop_db().await;
}

/// One worker: a long run holds it while a second run waits in the queue, so the second
/// run's whole life shows on its event stream. The long run is cancelled mid-way, resumed,
/// and still ends exactly as an uninterrupted run.
async fn events_cancel_resume(api: &Api) {
    // About 150 depth-4 games a generation: long enough to still be running when cancelled.
    let long_config = json!({"population": 6, "depth": 4, "generations": 20, "seed": 5,
                             "fitness": {"games_per_pair": 10}});
    let long = api.create_run(json!({"config": long_config})).await;
    let long_id = long["id"].as_str().unwrap().to_string();
    api.wait_generations(&long_id, 1).await;
    let queued = api.create_run(json!({"config": tiny(3, 9)})).await;
    let id = queued["id"].as_str().unwrap().to_string();

    let mut events = Events::open(api, &id).await;
    let (kind, first) = events.next().await;
    assert_eq!(kind, "status");
    assert_eq!(first["status"], "queued");

    let (code, cancelled) = api
        .post(&format!("/api/runs/{long_id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(
        api.post(&format!("/api/runs/{long_id}/cancel"), json!({}))
            .await
            .0,
        409
    );

    let mut generations = Vec::new();
    loop {
        let (kind, data) = events.next().await;
        match kind.as_str() {
            "generation" => {
                assert_eq!(data["run_id"], id.as_str());
                assert!(data["best"].is_number() && data["best_weights"].is_array());
                generations.push(data["generation"].as_u64().unwrap());
            }
            "status" if data["status"] == "finished" => break,
            "status" => assert_eq!(data["status"], "running", "{data}"),
            other => panic!("unexpected event {other}"),
        }
    }
    assert_eq!(generations, vec![0, 1, 2]);

    // Resume the cancelled run: it goes on from its last written generation.
    let before = api.get(&format!("/api/runs/{long_id}")).await.1;
    let (code, resumed) = api
        .post(&format!("/api/runs/{long_id}/resume"), json!({}))
        .await;
    assert_eq!(code, 200, "{resumed}");
    // A free worker may claim the run before the response is written.
    assert!(
        resumed["status"] == "queued" || resumed["status"] == "running",
        "{resumed}"
    );
    assert!(resumed["generations_done"].as_u64() >= before["generations_done"].as_u64());
    check_finishes_as_uninterrupted(api, &long_id, &long["config"]).await;
}

/// Cancel and DELETE stop the generation under way: its remaining games are skipped, so the
/// one worker is free within seconds, long before the generation would have ended (400
/// games against `mcts:20000`, about half a second each: some 100 s on two threads).
async fn cancel_and_delete_stop_the_generation_under_way(api: &Api) {
    let long_config = json!({"population": 4, "depth": 2, "generations": 2, "seed": 3,
                             "fitness": {"mode": "opponents", "games_per_pair": 100,
                                         "opponents": ["mcts:20000"]},
                             "benchmark": {"panel": []}});
    for stop in ["cancel", "delete"] {
        let long = api.create_run(json!({"config": long_config})).await;
        let long_id = long["id"].as_str().unwrap().to_string();
        api.wait_status(&long_id, &["running"]).await;
        // Let the games get going.
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let stopped_at = std::time::Instant::now();
        if stop == "cancel" {
            let (code, body) = api
                .post(&format!("/api/runs/{long_id}/cancel"), json!({}))
                .await;
            assert_eq!(code, 200, "{body}");
        } else {
            assert_eq!(api.delete(&format!("/api/runs/{long_id}")).await, 204);
        }
        // The only worker takes the next run once the stopped generation lets it go.
        let next = api.create_run(json!({"config": tiny(1, 4)})).await;
        let next_id = next["id"].as_str().unwrap().to_string();
        let done = api.wait_status(&next_id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{done}");
        let waited = stopped_at.elapsed();
        assert!(
            waited < std::time::Duration::from_secs(20),
            "{stop}: the next run finished {waited:?} after the stop"
        );
        if stop == "cancel" {
            let run = api.get(&format!("/api/runs/{long_id}")).await.1;
            assert_eq!(run["status"], "cancelled", "{run}");
            assert_eq!(run["generations_done"], 0, "{run}");
        }
    }
}

/// The agent catalogue, moves, positions, matches and tournaments, with a run as an agent.
async fn games(api: &Api) {
    let run = api.create_run(json!({"config": tiny(2, 4)})).await;
    let id = run["id"].as_str().unwrap();
    api.wait_status(id, &["finished"]).await;

    let (code, agents) = api.get("/api/agents").await;
    assert_eq!(code, 200);
    let kinds: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    for k in [
        "random",
        "greedy",
        "minimax",
        "heuristic",
        "pekar",
        "pekar-minimax",
        "perfect",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    assert!(agents["presets"]["feature_sets"].as_array().unwrap().len() >= 3);
    let export_entry = agents["exports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["run_id"] == id)
        .expect("the finished run is in the exports")
        .clone();

    let (code, start) = api.get("/api/position/start?pits=6&seeds=4").await;
    assert_eq!(code, 200, "{start}");
    assert_eq!(start["position"], "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S");
    assert_eq!(start["legal_moves"], json!([1, 2, 3, 4, 5, 6]));
    assert_eq!(start["to_move"], "south");

    let (code, human) = api
        .post(
            "/api/position",
            json!({"position": start["position"], "move": 3}),
        )
        .await;
    assert_eq!(code, 200, "{human}");
    assert_eq!(human["position_after"], "4,4,0,5,5,5/1/4,4,4,4,4,4/0/S");
    assert_eq!(human["extra_turn"], true);
    assert_eq!(human["stores"], json!([1, 0]));

    for agent in [
        json!("minimax:2"),
        export_entry["spec"].clone(),
        json!(format!("run:{id}")),
    ] {
        let (code, mv) = api
            .post(
                "/api/move",
                json!({"agent": agent, "position": start["position"], "seed": 1}),
            )
            .await;
        assert_eq!(code, 200, "{mv}");
        let m = mv["move"].as_u64().unwrap();
        assert!((1..=6).contains(&m));
        assert!(mv["position_after"].is_string() && mv["nodes"].is_number());
        assert!(mv["extra_turn"].is_boolean() && mv["game_over"] == false);
        assert_eq!(mv["value"]["unit"], "search_score", "{mv}");
        assert!(mv["value_text"].is_string(), "{mv}");
    }
    let (code, mcts) = api
        .post(
            "/api/move",
            json!({"agent": "mcts:200", "position": start["position"], "seed": 1}),
        )
        .await;
    assert_eq!(code, 200, "{mcts}");
    assert_eq!(mcts["playouts"], 200, "{mcts}");
    assert_eq!(mcts["value"]["unit"], "playout_score", "{mcts}");

    let (code, report) = api
        .post(
            "/api/matches",
            json!({"south": "minimax:2", "north": export_entry["spec"], "games": 4, "seed": 1, "opening_plies": 1}),
        )
        .await;
    assert_eq!(code, 200, "{report}");
    assert_eq!(report["games"].as_array().unwrap().len(), 4);
    assert!(report["score"].is_number());
    assert_eq!(report["summary"]["games"], 4);

    let (code, sprt) = api
        .post(
            "/api/matches",
            json!({"south": "minimax:4", "north": "greedy", "opening_plies": 2, "sprt": {"elo0": 0, "elo1": 10}}),
        )
        .await;
    assert_eq!(code, 200, "{sprt}");
    assert_eq!(sprt["verdict"], "accept_h1", "{sprt}");
    assert_eq!(sprt["sprt"]["alpha"], 0.05);
    assert!(sprt["estimate"]["elo"].as_f64().unwrap() > 0.0);

    let (code, t) = api
        .post(
            "/api/tournaments",
            json!({"agents": ["random", "greedy", "minimax:1"], "games": 2, "seed": 1}),
        )
        .await;
    assert_eq!(code, 202, "{t}");
    let tid = t["id"].as_str().unwrap();
    let table = loop {
        let (code, t) = api.get(&format!("/api/tournaments/{tid}")).await;
        assert_eq!(code, 200);
        if t["status"] != "running" && t["status"] != "queued" {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(table["status"], "finished", "{table}");
    assert_eq!(table["progress"], 1.0);
    assert_eq!(table["agents"].as_array().unwrap().len(), 3);
    assert!(table["table"][0][0].is_null());
    assert_eq!(table["table"][0][1]["games"], 1);
    assert_eq!(table["scores"].as_array().unwrap().len(), 3);
    assert_eq!(api.get("/api/tournaments/nope").await.0, 404);

    // A tournament of some 100 s (200 games of mcts:20000 on two threads) is cancelled half a
    // second in: it ends, stored as cancelled, within seconds.
    let (code, t) = api
        .post(
            "/api/tournaments",
            json!({"agents": ["mcts:20000", "mcts:20000:1.0"], "games": 100, "seed": 2}),
        )
        .await;
    assert_eq!(code, 202, "{t}");
    let tid = t["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cancelled_at = std::time::Instant::now();
    let (code, t) = api
        .post(&format!("/api/tournaments/{tid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["status"], "cancelled");
    let (code, again) = api
        .post(&format!("/api/tournaments/{tid}/cancel"), json!({}))
        .await;
    assert_eq!(code, 409, "{again}");
    assert_eq!(
        api.post("/api/tournaments/nope/cancel", json!({})).await.0,
        404
    );
    loop {
        let (_, listed) = api.get("/api/tournaments").await;
        let stored = listed["tournaments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == tid.as_str())
            .cloned()
            .expect("the tournament is listed");
        if stored["status"] == "cancelled" {
            break;
        }
        assert!(
            stored["status"] == "running" || stored["status"] == "queued",
            "{stored}"
        );
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(15),
            "the cancelled tournament still plays after {:?}",
            cancelled_at.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// TD-Leaf and Texel runs through the API: stored and stepped like GA runs, the same records
/// and export as without the server, their player named by `run:ID`, their requests checked.
async fn learning_runs(api: &Api) {
    let bodies = [
        json!({"tuner": "td-leaf", "preset": "ahmed", "name": "td",
               "config": {"games": 64, "checkpoint_games": 32, "depth": 2, "play_depth": 2,
                          "benchmark": {"pairs": 2}}}),
        json!({"tuner": "texel", "name": "texel",
               "config": {"games": 16, "rounds": 2, "depth": 1, "play_depth": 2,
                          "source": "minimax:2", "benchmark": {"pairs": 2}}}),
    ];
    for body in bodies {
        let run = api.create_run(body.clone()).await;
        let id = run["id"].as_str().unwrap().to_string();
        assert_eq!(run["tuner"], body["tuner"]);
        assert_eq!(run["config"]["method"], body["tuner"]);
        assert_eq!(run["generations_total"], 3, "{run}");
        let done = api.wait_status(&id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{done}");
        let (_, records, reference) = reference_run(&run["config"]);
        check_records(api, &id, &records).await;
        assert_eq!(export(api, &id).await, reference);
        assert_eq!(done["best_weights"], reference["weights"]);
        let (_, gens) = api.get(&format!("/api/runs/{id}/generations")).await;
        assert!(
            gens["generations"][2]["panel"]["overall"]["score"].is_number(),
            "{gens}"
        );
        let position = "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S";
        let (_, by_run) = api
            .post(
                "/api/move",
                json!({"agent": format!("run:{id}"), "position": position, "seed": 1}),
            )
            .await;
        let (_, by_export) = api
            .post(
                "/api/move",
                json!({"agent": reference["agent"], "position": position, "seed": 1}),
            )
            .await;
        assert_eq!(by_run["move"], by_export["move"], "{by_run}");
    }
    for (body, field) in [
        (json!({"tuner": "sarsa"}), "tuner"),
        (json!({"tuner": "texel", "preset": "ahmed"}), "preset"),
        (
            json!({"tuner": "td", "config": {"tuner": "td"}}),
            "config.tuner",
        ),
        (
            json!({"tuner": "texel", "config": {"checkpoint_games": 4}}),
            "config.checkpoint_games",
        ),
        (
            json!({"tuner": "td", "config": {"benchmark": {"panel": ["export:/etc/passwd"]}}}),
            "config.benchmark.panel[0]",
        ),
        (
            json!({"tuner": "texel", "config": {"source": "a3c:/dev/zero"}}),
            "config.source",
        ),
    ] {
        let (code, err) = api.post("/api/runs", body.clone()).await;
        assert_eq!(code, 422, "{body}: {err}");
        let got = err["error"]["field"].as_str().unwrap_or("");
        assert!(got.starts_with(field), "{body}: {err}");
    }
}

/// CMA-ES, SPSA and DE runs through the API (on PostgreSQL, their games on the batch queue):
/// the records and export the library gives, the tuner's state in each record, their player
/// named by `run:ID`, their settings checked with the field named.
async fn population_tuner_runs(api: &Api) {
    for tuner in ["cmaes", "spsa", "de"] {
        // DE plays targets beside their trials: an even population.
        let population = if tuner == "de" { 8 } else { 7 };
        let body = json!({"tuner": tuner, "name": tuner,
                          "config": {"population": population, "generations": 3, "depth": 2, "seed": 9,
                                     "fitness": {"games_per_pair": 4},
                                     "benchmark": {"pairs": 2, "panel": ["minimax:2"]}}});
        let run = api.create_run(body).await;
        let id = run["id"].as_str().unwrap().to_string();
        assert_eq!(run["tuner"], tuner, "{run}");
        assert_eq!(run["config"]["tuner"], tuner, "{run}");
        assert_eq!(run["generations_total"], 3, "{run}");
        let done = api.wait_status(&id, &["finished", "failed"]).await;
        assert_eq!(done["status"], "finished", "{done}");
        let (_, records, reference) = reference_run(&run["config"]);
        check_records(api, &id, &records).await;
        assert_eq!(export(api, &id).await, reference, "{tuner}");
        let (_, by_run) = api
            .post(
                "/api/move",
                json!({"agent": format!("run:{id}"), "position": "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S", "seed": 1}),
            )
            .await;
        assert!(by_run["move"].is_number(), "{by_run}");
        let bad = json!({"tuner": tuner, "config": {tuner: {"nonsense": 1}}});
        let (code, err) = api.post("/api/runs", bad.clone()).await;
        assert_eq!(code, 422, "{bad}: {err}");
        let field = err["error"]["field"].as_str().unwrap_or("");
        assert!(
            field.starts_with(&format!("config.{tuner}")),
            "{bad}: {err}"
        );
    }
}

async fn all_scenarios(db: TestDb, backend: &str) {
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    lifecycle(&api, backend).await;
    learning_runs(&api).await;
    population_tuner_runs(&api).await;
    events_cancel_resume(&api).await;
    cancel_and_delete_stop_the_generation_under_way(&api).await;
    games(&api).await;
    srv.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(all_scenarios(db, backend): sqlite_api, postgres_api);

/// A database survives a restart of the server: runs and their generations are still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_restart_keeps_runs() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let run = api.create_run(json!({"config": tiny(2, 2)})).await;
    let id = run["id"].as_str().unwrap().to_string();
    api.wait_status(&id, &["finished"]).await;
    // Renamed, noted and tagged after it finished: kept across the restart too.
    let patch = |body: Value| {
        let api = &api;
        let path = format!("/api/runs/{id}");
        async move {
            let (code, _, run) = api
                .send(
                    reqwest::Method::PATCH,
                    &path,
                    &[("content-type", "application/json")],
                    Some(body.to_string()),
                )
                .await;
            (code, run)
        }
    };
    let (code, described) = patch(json!({"name": " tuned ", "notes": "depth 2 only",
                                         "tags": ["baseline", "d2 ", "baseline"]}))
    .await;
    assert_eq!(code, 200, "{described}");
    assert_eq!(described["name"], "tuned");
    assert_eq!(described["tags"], json!(["baseline", "d2"]));
    let (code, kept) = patch(json!({"tags": ["baseline"]})).await;
    assert_eq!(code, 200, "{kept}");
    assert_eq!(kept["name"], "tuned", "parts not given are kept");
    assert_eq!(kept["notes"], "depth 2 only");
    for (body, field) in [
        (json!({"tags": ["ok", "<script>"]}), "tags[1]"),
        (json!({"tags": [""]}), "tags[0]"),
        (json!({"status": "finished"}), "status"),
        (json!({"notes": "x".repeat(10_001)}), "notes"),
    ] {
        let (code, err) = patch(body.clone()).await;
        assert_eq!(code, 422, "{body}: {err}");
        assert_eq!(err["error"]["field"].as_str().unwrap_or(""), field, "{err}");
    }
    // A tournament is stored when it ends: listed and shown after the restart.
    let (code, t) = api
        .post(
            "/api/tournaments",
            json!({"agents": ["random", "greedy"], "games": 2, "seed": 4,
                   "names": ["the random one", "greedy"]}),
        )
        .await;
    assert_eq!(code, 202, "{t}");
    let tid = t["id"].as_str().unwrap().to_string();
    let finished = loop {
        let (_, t) = api.get(&format!("/api/tournaments/{tid}")).await;
        if t["status"] != "running" && t["status"] != "queued" {
            break t;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(finished["status"], "finished", "{finished}");
    srv.shutdown().await;

    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let (code, reopened) = api.get(&format!("/api/tournaments/{tid}")).await;
    assert_eq!(code, 200, "{reopened}");
    assert_eq!(
        reopened, finished,
        "the stored tournament is the one that finished"
    );
    let (_, listed) = api.get("/api/tournaments").await;
    assert_eq!(listed["tournaments"][0]["id"], tid.as_str());
    assert_eq!(listed["tournaments"][0]["names"][0], "the random one");
    let again = api.get(&format!("/api/runs/{id}")).await.1;
    assert_eq!(again["status"], "finished");
    assert_eq!(again["generations_done"], 2);
    assert_eq!(again["name"], "tuned");
    assert_eq!(again["notes"], "depth 2 only");
    assert_eq!(again["tags"], json!(["baseline"]));
    srv.shutdown().await;
    db.drop_db().await;
}

/// The pie rule through the move and position routes: the opening move earns no extra turn
/// and offers the swap (KPN field P); the swap is move 16; agents answer the offer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pie_rule_over_the_api() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let start = "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S";
    // Pit 3 with 4 seeds ends in the store: an extra turn without the pie rule, none with it.
    let (code, plain) = api
        .post("/api/position", json!({"position": start, "move": 3}))
        .await;
    assert_eq!(code, 200, "{plain}");
    assert_eq!(plain["extra_turn"], true);
    let (code, opened) = api
        .post(
            "/api/position",
            json!({"position": start, "move": 3, "pie": true}),
        )
        .await;
    assert_eq!(code, 200, "{opened}");
    assert_eq!(opened["extra_turn"], false, "{opened}");
    let offer = opened["position_after"].as_str().unwrap().to_string();
    assert!(offer.ends_with("/N/P"), "{offer}");
    let (code, swapped) = api
        .post("/api/position", json!({"position": offer, "move": 16}))
        .await;
    assert_eq!(code, 200, "{swapped}");
    assert_eq!(swapped["swap"], true);
    assert!(
        swapped["position_after"].as_str().unwrap().ends_with("/S"),
        "{swapped}"
    );
    // A searching agent weighs the swap as one more move.
    let (code, answer) = api
        .post(
            "/api/move",
            json!({"agent": "minimax:3", "position": offer, "seed": 1}),
        )
        .await;
    assert_eq!(code, 200, "{answer}");
    let mv = answer["move"].as_u64().unwrap();
    assert!(mv == 16 || (1..=6).contains(&mv), "{answer}");
    srv.shutdown().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_guards_state_changes() {
    let db = sqlite_db();
    let srv = server(&db, Some("s3cret")).await;
    let mut api = Api::of(&srv);
    let body = json!({"config": tiny(1, 1)});
    let (code, err) = api.post("/api/runs", body.clone()).await;
    assert_eq!(code, 401, "{err}");
    assert_eq!(err["error"]["status"], 401);
    api.token = Some("wrong".into());
    assert_eq!(api.post("/api/runs", body.clone()).await.0, 401);
    assert_eq!(
        api.delete("/api/runs/00000000-0000-0000-0000-000000000000")
            .await,
        401
    );
    // Reads stay open.
    assert_eq!(api.get("/api/runs").await.0, 200);
    // The scheme's name is case-insensitive (RFC 7235).
    api.token = None;
    for scheme in ["bearer", "BEARER"] {
        let auth = format!("{scheme} s3cret");
        let (code, _, answer) = api
            .send(
                reqwest::Method::POST,
                "/api/runs/estimate",
                &[
                    ("content-type", "application/json"),
                    ("authorization", &auth),
                ],
                Some(body.to_string()),
            )
            .await;
        assert_eq!(code, 200, "{scheme}: {answer}");
    }
    api.token = Some("s3cret".into());
    let run = api.create_run(body).await;
    api.wait_status(run["id"].as_str().unwrap(), &["finished"])
        .await;
    srv.shutdown().await;
    db.drop_db().await;
}

/// (status, field) of an error response.
fn error_of(code: u16, body: &Value) -> (u16, Option<String>) {
    assert_eq!(body["error"]["status"], code, "{body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    (code, body["error"]["field"].as_str().map(str::to_string))
}

/// The words of an answer that belong to the server's insides: Rust's types, serde's and axum's
/// phrases. None may reach a client.
fn leaked_words(message: &str) -> Vec<String> {
    const TYPES: [&str; 14] = [
        "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "f32",
        "f64", "struct",
    ];
    const PHRASES: [&str; 8] = [
        "invalid type",
        "invalid value",
        "untagged enum",
        "Failed to",
        "Invalid URL",
        "Cannot parse",
        "deserialize",
        "length limit",
    ];
    let mut found: Vec<String> = message
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| TYPES.contains(w) || *w == "enum")
        .map(str::to_string)
        .collect();
    found.extend(
        PHRASES
            .iter()
            .filter(|p| message.contains(*p))
            .map(|p| p.to_string()),
    );
    found
}

/// Wrong types, bad query strings and paths are answered in the API's words, and a body that
/// names a key twice is refused naming the key, wherever it sits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_speak_the_apis_words_and_keys_are_unique() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let posts = [
        ("/api/runs", r#"{"config": {"population": "many"}}"#),
        ("/api/runs", r#"{"config": {"population": 1.5}}"#),
        ("/api/runs", r#"{"config": {"seed": -1}}"#),
        ("/api/runs", r#"{"config": {"depth": 99999999999}}"#),
        ("/api/runs", r#"{"config": []}"#),
        ("/api/runs", r#"{"config": {"mutation": {"rate": "high"}}}"#),
        (
            "/api/runs",
            r#"{"config": {"fitness": {"games_per_pair": true}}}"#,
        ),
        ("/api/move", r#"{"agent": "minimax:2", "position": 5}"#),
        (
            "/api/move",
            r#"{"agent": {"kind": "minimax", "depth": "deep"}}"#,
        ),
        (
            "/api/move",
            r#"{"agent": {"kind": "minimax", "depth": -1}}"#,
        ),
        (
            "/api/move",
            r#"{"agent": {"kind": "mcts", "iterations": 1e3}}"#,
        ),
        ("/api/move", r#"{"agent": 7}"#),
        (
            "/api/matches",
            r#"{"south": "greedy", "north": "greedy", "games": 1.5}"#,
        ),
        (
            "/api/matches",
            r#"{"south": "greedy", "north": "greedy", "seed": "x"}"#,
        ),
        ("/api/tournaments", r#"{"agents": "greedy"}"#),
        (
            "/api/tournaments",
            r#"{"agents": ["greedy", "random"], "games": -2}"#,
        ),
        ("/api/position", r#"{"position": [1]}"#),
    ];
    for (path, body) in posts {
        let (c, b) = api.post_raw(path, body).await;
        let (code, _) = error_of(c, &b);
        assert!((400..500).contains(&code), "{path} {body}: {b}");
        let message = b["error"]["message"].as_str().unwrap_or_default();
        assert!(leaked_words(message).is_empty(), "{path} {body}: {message}");
    }
    let (_, b) = api
        .post_raw("/api/runs", r#"{"config": {"population": "many"}}"#)
        .await;
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("must be a whole number from 0 to"),
        "{b}"
    );
    for path in [
        "/api/position/start?pits=x",
        "/api/position/start?pits=-1",
        "/api/runs/00000000-0000-0000-0000-000000000000/generations?since=-1",
        "/api/runs/%FF%FE",
        "/api/runs/%FF/generations/%FE",
        "/api/tournaments/%C3%28",
    ] {
        let (c, b) = api.get(path).await;
        let (code, _) = error_of(c, &b);
        assert!((400..500).contains(&code), "{path}: {b}");
        let message = b["error"]["message"].as_str().unwrap_or_default();
        assert!(leaked_words(message).is_empty(), "{path}: {message}");
    }

    for (body, field) in [
        (
            r#"{"config": {"seed": 1}, "config": {"seed": 2}}"#,
            "config",
        ),
        (r#"{"config": {"seed": 1, "seed": 2}}"#, "config.seed"),
        (
            r#"{"config": {"fitness": {"opponents": [{"kind": "minimax", "depth": 1, "depth": 9}]}}}"#,
            "config.fitness.opponents[0].depth",
        ),
    ] {
        let (c, b) = api.post_raw("/api/runs", body).await;
        let (code, named) = error_of(c, &b);
        assert_eq!((code, named.as_deref()), (422, Some(field)), "{body}: {b}");
        assert!(
            b["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(field),
            "{b}"
        );
    }
    let (c, b) = api
        .post_raw(
            "/api/move",
            r#"{"agent": "greedy", "agent": "random", "position": "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S"}"#,
        )
        .await;
    assert_eq!(error_of(c, &b), (422, Some("agent".to_string())), "{b}");
    let (c, list) = api.get("/api/runs").await;
    assert_eq!(c, 200);
    assert_eq!(
        list["runs"],
        json!([]),
        "a refused body created a run: {list}"
    );
    srv.shutdown().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_names_the_field() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let field = |f: &str| Some(f.to_string());

    let (c, b) = api.post_raw("/api/runs", "{not json").await;
    assert_eq!(error_of(c, &b), (400, None));
    let (c, b) = api.post_raw("/api/runs", "[1, 2]").await;
    assert_eq!(error_of(c, &b), (400, None));
    let (c, b) = api.post_raw("/api/runs", "").await;
    assert_eq!(error_of(c, &b), (400, None));

    let cases = [
        (
            json!({"config": {"population": "many"}}),
            "config.population",
        ),
        (json!({"config": {"population": 0}}), "config.population"),
        (
            json!({"config": {"population": 100000}}),
            "config.population",
        ),
        (json!({"config": {"generations": 0}}), "config.generations"),
        (json!({"config": {"depth": 99}}), "config.depth"),
        (
            json!({"config": {"mutation": {"rate": 2.0}}}),
            "config.mutation.rate",
        ),
        (
            json!({"config": {"features": "nonsense"}}),
            "config.features",
        ),
        (
            json!({"config": {"fitness": {"mode": "opponents", "opponents": ["nobody"]}}}),
            "config.fitness.opponents[0]",
        ),
        (json!({"config": {"colour": "blue"}}), "config"),
        (json!({"config": 7}), "config"),
        (json!({"preset": "nobody"}), "preset"),
        (json!({"preset": 3}), "preset"),
        (json!({"name": 5}), "name"),
        (json!({"nmae": "typo"}), "nmae"),
    ];
    for (body, want) in cases {
        let (c, b) = api.post("/api/runs", body.clone()).await;
        let (code, got) = error_of(c, &b);
        assert_eq!(code, 422, "{body}: {b}");
        let got = got.unwrap_or_default();
        assert!(
            got.starts_with(want),
            "{body}: field {got:?}, want {want:?} ({b})"
        );
    }
    // No run was created by any of those.
    assert_eq!(api.get("/api/runs").await.1["runs"], json!([]));

    let start = "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S";
    let cases = [
        (
            "/api/move",
            json!({"agent": "nobody", "position": start}),
            "agent",
        ),
        (
            "/api/move",
            json!({"agent": {"kind": "minimax", "depth": 50}, "position": start}),
            "agent",
        ),
        (
            "/api/move",
            json!({"agent": "export:/etc/passwd", "position": start}),
            "agent",
        ),
        (
            "/api/move",
            json!({"agent": {"kind": "export", "path": "/etc/passwd"}, "position": start}),
            "agent",
        ),
        (
            "/api/move",
            json!({"agent": {"kind": "run", "id": "00000000-0000-0000-0000-000000000000"}, "position": start}),
            "agent.id",
        ),
        ("/api/move", json!({"agent": 5, "position": start}), "agent"),
        (
            "/api/move",
            json!({"agent": "random", "position": "4,4/0/4/0/S"}),
            "position",
        ),
        (
            "/api/move",
            json!({"agent": "random", "position": "0,0,0,0,0,0/24/4,4,4,4,4,4/0/S"}),
            "position",
        ),
        ("/api/move", json!({"agent": "random"}), "position"),
        (
            "/api/move",
            json!({"agent": "random", "position": start, "seed": -1}),
            "seed",
        ),
        (
            "/api/move",
            json!({"agent": "random", "position": start, "rules": "house"}),
            "rules",
        ),
        (
            "/api/position",
            json!({"position": start, "move": 9}),
            "move",
        ),
        (
            "/api/position",
            json!({"position": start, "move": "three"}),
            "move",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "games": 100000}),
            "games",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "nobody"}),
            "north",
        ),
        // Colour-swapped pairs, as in tournaments: an odd number is refused.
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "games": 3}),
            "games",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "opening_plies": 99}),
            "opening_plies",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "board": {"pits": 40, "seeds": 4}}),
            "board",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "sprt": "10,0"}),
            "sprt",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "sprt": "0,10", "games": 10}),
            "sprt",
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "sprt": "0,10", "max_pairs": 100000}),
            "max_pairs",
        ),
        ("/api/tournaments", json!({"agents": ["random"]}), "agents"),
        // Accepted in 3 ms and some 13 days of games, before the cost estimate.
        (
            "/api/tournaments",
            json!({"agents": [{"kind": "mcts", "time_ms": 10000}, {"kind": "mcts", "time_ms": 10000, "c": 1.0}], "games": 100}),
            "games",
        ),
        (
            "/api/matches",
            json!({"south": {"kind": "mcts", "time_ms": 10000}, "north": "mcts:200000", "games": 200}),
            "games",
        ),
        (
            "/api/matches",
            json!({"south": {"kind": "mcts", "time_ms": 10000}, "north": "random", "sprt": "0,10"}),
            "max_pairs",
        ),
        (
            "/api/tournaments",
            json!({"agents": ["random", "nobody"]}),
            "agents[1]",
        ),
        (
            "/api/tournaments",
            json!({"agents": ["random", "greedy"], "games": 0}),
            "games",
        ),
        // Colour-swapped pairs: an odd number is refused, not rounded up.
        (
            "/api/tournaments",
            json!({"agents": ["random", "greedy"], "games": 5}),
            "games",
        ),
    ];
    for (path, body, want) in cases {
        let (c, b) = api.post(path, body.clone()).await;
        let (code, got) = error_of(c, &b);
        assert_eq!(code, 422, "{path} {body}: {b}");
        let got = got.unwrap_or_default();
        assert!(
            got.starts_with(want),
            "{path} {body}: field {got:?}, want {want:?} ({b})"
        );
    }
    let (c, b) = api.get("/api/position/start?pits=99").await;
    assert_eq!(error_of(c, &b), (422, field("pits")));
    let (c, b) = api.get("/api/runs/not-a-uuid").await;
    assert_eq!(error_of(c, &b).0, 404);
    let (c, b) = api
        .get("/api/runs/00000000-0000-0000-0000-000000000000/export")
        .await;
    assert_eq!(error_of(c, &b).0, 404);
    let (c, b) = api.get("/api/no/such/route").await;
    assert_eq!(error_of(c, &b).0, 404);
    let (c, b) = api
        .post(
            "/api/runs/00000000-0000-0000-0000-000000000000/cancel",
            json!({}),
        )
        .await;
    assert_eq!(error_of(c, &b).0, 404);

    let run = api.create_run(json!({"config": tiny(1, 1)})).await;
    let id = run["id"].as_str().unwrap();
    let (c, b) = api
        .get(&format!("/api/runs/{id}/generations?since=abc"))
        .await;
    assert_eq!(error_of(c, &b), (422, field("since")));
    api.wait_status(id, &["finished"]).await;

    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(2 << 20));
    let (c, b) = api.post_oversized("/api/runs", huge).await;
    assert_eq!(error_of(c, &b).0, 413, "{b}");
    srv.shutdown().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_lists_every_route_and_dashboard_is_served() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let (code, doc) = api.get("/api/openapi.json").await;
    assert_eq!(code, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    check_request_schemas(&doc);
    let routes = [
        ("/api/runs", "get"),
        ("/api/runs", "post"),
        ("/api/runs/{id}", "get"),
        ("/api/runs/{id}", "delete"),
        ("/api/runs/{id}", "patch"),
        ("/api/runs/{id}/cancel", "post"),
        ("/api/runs/{id}/resume", "post"),
        ("/api/runs/{id}/generations", "get"),
        ("/api/runs/{id}/generations/{g}", "get"),
        ("/api/runs/{id}/export", "get"),
        ("/api/runs/{id}/events", "get"),
        ("/api/events", "get"),
        ("/api/agents", "get"),
        ("/api/move", "post"),
        ("/api/position", "post"),
        ("/api/position/start", "get"),
        ("/api/matches", "post"),
        ("/api/tournaments", "get"),
        ("/api/tournaments", "post"),
        ("/api/tournaments/{id}", "get"),
        ("/api/tournaments/{id}/cancel", "post"),
        ("/api/sprt-tests", "get"),
        ("/api/sprt-tests", "post"),
        ("/api/sprt-tests/{id}", "get"),
        ("/api/sprt-tests/{id}/cancel", "post"),
        ("/api/workers", "get"),
        ("/api/healthz", "get"),
        ("/healthz", "get"),
        ("/api/readyz", "get"),
        ("/readyz", "get"),
        ("/api/openapi.json", "get"),
        ("/api/docs", "get"),
        ("/api/token-check", "post"),
    ];
    // No batch worker plays on SQLite: the workers page's list is empty, not an error.
    let (code, workers) = api.get("/api/workers").await;
    assert_eq!((code, &workers), (200, &serde_json::json!({"workers": []})));
    for (path, method) in routes {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} in the OpenAPI document");
        // Every state change can be refused for a missing token or another site's page.
        if method != "get" {
            for code in ["401", "403"] {
                assert!(
                    op["responses"][code].is_object(),
                    "{method} {path} documents {code}"
                );
            }
        }
    }
    let resp = api
        .client
        .get(format!("{}/", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    // No other site may frame the dashboard (clickjacking), nor have its files sniffed.
    for path in ["/", "/js/run.js", "/api/runs"] {
        let resp = api
            .client
            .get(format!("{}{path}", api.base))
            .send()
            .await
            .unwrap();
        let headers = resp.headers();
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(
            headers["content-security-policy"], "frame-ancestors 'none'",
            "{path}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
    }
    assert_eq!(api.get("/no-such-file.js").await.0, 404);
    assert_eq!(api.get("/../Cargo.toml").await.0, 404);
    // The interactive reference: RapiDoc over this document, its script served here.
    let (code, _, page) = api.send(reqwest::Method::GET, "/api/docs", &[], None).await;
    assert_eq!(code, 200);
    let page = page.as_str().unwrap_or_default().to_string();
    assert!(
        page.contains("<rapi-doc") && page.contains("spec-url=\"/api/openapi.json\""),
        "{page}"
    );
    assert!(page.contains("src=\"/vendor/rapidoc-min.js\""), "{page}");
    assert!(
        !page.contains("https://"),
        "the page loads nothing from the network: {page}"
    );
    let script = api
        .client
        .get(format!("{}/vendor/rapidoc-min.js", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(script.status().as_u16(), 200);
    srv.shutdown().await;
    db.drop_db().await;
}

/// The request bodies' schemas, generated from the handlers' types: what issue 19 found
/// missing or wrong in the hand-written document.
fn check_request_schemas(doc: &Value) {
    let schemas = &doc["components"]["schemas"];
    let body = |path: &str, method: &str| {
        let reference = doc["paths"][path][method]["requestBody"]["content"]["application/json"]
            ["schema"]["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} names its body's schema"))
            .to_string();
        schemas[reference.trim_start_matches("#/components/schemas/")].clone()
    };
    // Every agent kind, mcts and a3c included.
    let kinds: Vec<&str> = schemas["AgentSpec"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["properties"]["kind"]["enum"][0].as_str().unwrap())
        .collect();
    for kind in [
        "random",
        "greedy",
        "minimax",
        "heuristic",
        "pekar",
        "pekar-minimax",
        "perfect",
        "mcts",
        "a3c",
    ] {
        assert!(kinds.contains(&kind), "agent kind {kind} in {kinds:?}");
    }
    let mcts = schemas["AgentSpec"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["properties"]["kind"]["enum"][0] == "mcts")
        .unwrap();
    assert_eq!(mcts["properties"]["iterations"]["maximum"], 200000.0);

    let mv = body("/api/move", "post");
    assert_eq!(mv["required"], json!(["agent", "position"]));
    assert_eq!(mv["additionalProperties"], false);
    let pattern = mv["properties"]["position"]["pattern"].as_str().unwrap();
    assert!(
        pattern.starts_with('^') && pattern.contains("[SsNn]"),
        "{pattern}"
    );
    assert_eq!(mv["properties"]["seed"]["minimum"], 0);

    let matches = body("/api/matches", "post");
    assert_eq!(matches["required"], json!(["south", "north"]));
    assert_eq!(matches["properties"]["games"]["maximum"], 200.0);
    assert_eq!(
        body("/api/tournaments", "post")["properties"]["agents"]["minItems"],
        2
    );

    // A run's config is typed: the GA's fields with the validator's ranges, a learner's, or a
    // CMA-ES, SPSA or DE run's (the GA's fields and the tuner's settings under its name).
    let run = body("/api/runs", "post");
    assert_eq!(
        run["properties"]["config"]["$ref"],
        "#/components/schemas/RunConfig"
    );
    let configs = schemas["RunConfig"]["anyOf"].as_array().unwrap();
    assert_eq!(
        configs.len(),
        7,
        "the GA, three learners, CMA-ES, SPSA and DE"
    );
    for (schema, tuner) in configs[4..].iter().zip(["cmaes", "spsa", "de"]) {
        assert!(schema["properties"][tuner].is_object(), "{schema}");
        assert!(schema["properties"]["population"].is_object(), "{schema}");
    }
    let ga = &configs[0]["properties"];
    assert_eq!(ga["population"]["maximum"], 1000);
    assert_eq!(ga["fitness"]["properties"]["mode"]["type"], "string");
    assert!(configs[1]["properties"]["play_depth"].is_object());

    // Auth is off by default, so a token is optional: the empty requirement comes first.
    let security = &doc["paths"]["/api/runs"]["post"]["security"];
    assert_eq!(security[0], json!({}), "{security}");
}

// Security: what the API reads, stored rows it cannot read, cross-site requests, error shapes.

const START: &str = "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S";

/// Posts with a deadline: a server that opened a FIFO would never answer.
async fn post_soon(api: &Api, path: &str, body: Value) -> (u16, Value) {
    tokio::time::timeout(Duration::from_secs(30), api.post(path, body.clone()))
        .await
        .unwrap_or_else(|_| panic!("{path} {body}: no answer within 30 s"))
}

/// A FIFO at `path` (nothing is ever written to it).
fn make_fifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// An export document whose agent is `agent`, as far as agents read one.
fn document(agent: Value) -> Value {
    json!({"format_version": 1, "agent": agent})
}

/// Every way a request can name a file is refused before the file is opened, naming the
/// field: moves, matches, tournaments, and run configs' opponents and panel, also inside
/// inline export documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_reads_no_file_a_client_names() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let dir = temp_folder("fifo");
    let fifo = dir.join("model.bin");
    make_fifo(&fifo);
    let fifo = fifo.display().to_string();
    let named = [
        json!("a3c:/etc/shadow"),
        json!(format!("a3c:{fifo}")),
        json!("a3c:/dev/zero"),
        json!({"kind": "a3c", "model": "/etc/passwd"}),
        json!("export:/etc/passwd"),
        json!(format!("export:{fifo}")),
        json!({"kind": "export", "path": "/etc/passwd"}),
        json!({"kind": "heuristic", "from_export": document(json!("a3c:/etc/shadow"))}),
        json!({"kind": "heuristic", "from_export": document(json!({"kind": "a3c", "model": fifo}))}),
        json!({"kind": "heuristic", "from_export": document(json!("export:/etc/passwd"))}),
    ];
    let refused = |body: &Value, code: u16, b: &Value, want: &str| {
        let (code, field) = error_of(code, b);
        assert_eq!(code, 422, "{body}: {b}");
        let field = field.unwrap_or_default();
        assert!(
            field.starts_with(want),
            "{body}: field {field:?}, want {want:?}"
        );
        let message = b["error"]["message"].as_str().unwrap_or_default();
        // What a read would have said: the file was opened.
        for opened in ["safetensors", "No such file", "is not JSON", "root:"] {
            assert!(!message.contains(opened), "{body}: {message}");
        }
    };
    for agent in &named {
        let body = json!({"agent": agent, "position": START});
        let (c, b) = post_soon(&api, "/api/move", body.clone()).await;
        refused(&body, c, &b, "agent");
        let body = json!({"south": "random", "north": agent, "games": 2});
        let (c, b) = post_soon(&api, "/api/matches", body.clone()).await;
        refused(&body, c, &b, "north");
        let body = json!({"agents": ["random", agent], "games": 2});
        let (c, b) = post_soon(&api, "/api/tournaments", body.clone()).await;
        refused(&body, c, &b, "agents[1]");
        let body =
            json!({"config": {"fitness": {"mode": "opponents", "opponents": ["random", agent]}}});
        let (c, b) = post_soon(&api, "/api/runs", body.clone()).await;
        refused(&body, c, &b, "config.fitness.opponents[1]");
        let body = json!({"config": {"benchmark": {"panel": [agent]}}});
        let (c, b) = post_soon(&api, "/api/runs", body.clone()).await;
        refused(&body, c, &b, "config.benchmark.panel[0]");
    }
    assert_eq!(api.get("/api/runs").await.1["runs"], json!([]));
    // What the server knows still plays: the embedded model and inline documents.
    for agent in [
        json!("a3c"),
        json!({"kind": "heuristic", "from_export": document(json!("minimax:2"))}),
    ] {
        let (c, b) = post_soon(
            &api,
            "/api/move",
            json!({"agent": agent, "position": START}),
        )
        .await;
        assert_eq!(c, 200, "{agent}: {b}");
    }
    srv.shutdown().await;
    db.drop_db().await;
    std::fs::remove_dir_all(&dir).ok();
}

/// With `--models-dir`, clients name models and export documents inside it, and nothing
/// outside it: no absolute paths, no `..`, no symbolic link out, no FIFO. A run that plays
/// such a model stays listed and deletable after the file goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_folder_serves_the_names_in_it_only() {
    let root = temp_folder("models");
    let models = root.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/a3c-6x4.safetensors");
    std::fs::copy(model, models.join("m.safetensors")).unwrap();
    std::fs::copy(model, root.join("outside.safetensors")).unwrap();
    std::os::unix::fs::symlink(
        root.join("outside.safetensors"),
        models.join("link.safetensors"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", models.join("passwd.json")).unwrap();
    make_fifo(&models.join("pipe.safetensors"));
    std::fs::write(
        models.join("best.json"),
        document(json!("minimax:2")).to_string(),
    )
    .unwrap();

    let db = sqlite_db();
    let dir = models.clone();
    let srv = server_with(&db, move |c| c.models_dir = Some(dir)).await;
    let api = Api::of(&srv);
    for agent in ["a3c:m.safetensors", "export:best.json"] {
        let (c, b) = post_soon(
            &api,
            "/api/move",
            json!({"agent": agent, "position": START}),
        )
        .await;
        assert_eq!(c, 200, "{agent}: {b}");
    }
    let inside = models.join("m.safetensors").display().to_string();
    for agent in [
        json!("a3c:../outside.safetensors"),
        json!(format!("a3c:{inside}")),
        json!("a3c:link.safetensors"),
        json!("a3c:pipe.safetensors"),
        json!("a3c:missing.safetensors"),
        json!({"kind": "a3c", "model": "/etc/shadow"}),
        json!("export:passwd.json"),
        json!("export:../models/best.json"),
    ] {
        let (c, b) = post_soon(
            &api,
            "/api/move",
            json!({"agent": agent, "position": START}),
        )
        .await;
        let (code, field) = error_of(c, &b);
        assert_eq!(code, 422, "{agent}: {b}");
        assert!(
            field.unwrap_or_default().starts_with("agent."),
            "{agent}: {b}"
        );
        let message = b["error"]["message"].as_str().unwrap_or_default();
        assert!(
            !message.contains(&root.display().to_string()) || agent.to_string().contains(&inside),
            "{agent}: the server's folder shows: {message}"
        );
    }

    // A link out to a file that exists, a missing name and a link out to nothing answer alike:
    // the folder is no oracle for what exists outside it.
    std::os::unix::fs::symlink(root.join("gone"), models.join("dangling.safetensors")).unwrap();
    let mut answers = Vec::new();
    for name in ["link", "missing", "dangling"] {
        let (c, b) = post_soon(
            &api,
            "/api/move",
            json!({"agent": format!("a3c:{name}.safetensors"), "position": START}),
        )
        .await;
        let message = b["error"]["message"].as_str().unwrap_or_default();
        answers.push((
            c,
            b["error"]["field"].clone(),
            message.replace(name, "NAME"),
        ));
    }
    assert_eq!(answers[0], answers[1], "{answers:?}");
    assert_eq!(answers[2], answers[1], "{answers:?}");

    let config = json!({"population": 4, "depth": 1, "generations": 1, "seed": 3,
        "fitness": {"mode": "opponents", "opponents": ["a3c:m.safetensors"], "games_per_pair": 2}});
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().unwrap().to_string();
    let done = api.wait_status(&id, &["finished", "failed"]).await;
    assert_eq!(done["status"], "finished", "{done}");
    std::fs::remove_file(models.join("m.safetensors")).unwrap();
    let (c, list) = api.get("/api/runs").await;
    assert_eq!(c, 200, "{list}");
    assert_eq!(list["runs"][0]["id"], json!(id));
    assert_eq!(api.get(&format!("/api/runs/{id}")).await.0, 200);
    assert_eq!(api.get("/api/agents").await.0, 200);
    assert_eq!(api.get(&format!("/api/runs/{id}/export")).await.0, 200);
    assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
    srv.shutdown().await;
    db.drop_db().await;
    std::fs::remove_dir_all(&root).ok();
}

/// A stored config that no longer reads (another version's, a hand edit) breaks neither the
/// list nor the catalogue; the run says what is wrong, its export is refused with that
/// reason, and it can be deleted.
async fn unreadable_rows(db: TestDb) {
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let good = api.create_run(json!({"config": tiny(1, 1)})).await;
    let bad = api.create_run(json!({"config": tiny(1, 2)})).await;
    let (good, bad) = (good["id"].as_str().unwrap(), bad["id"].as_str().unwrap());
    api.wait_status(good, &["finished"]).await;
    api.wait_status(bad, &["finished"]).await;
    execute_sql(
        &db,
        &format!(
            "UPDATE runs SET config = '{{\"population\": \"many\", \"fitness\": {{\"opponents\": [\"a3c:/gone.safetensors\"]}}}}', \
             features = 'not json' WHERE id = '{bad}'"
        ),
    )
    .await;
    let (c, list) = api.get("/api/runs").await;
    assert_eq!(c, 200, "{list}");
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{list}");
    let shown = runs.iter().find(|r| r["id"] == json!(bad)).unwrap();
    assert!(
        shown["error"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot be read"),
        "{shown}"
    );
    assert_eq!(shown["config"]["population"], "many");
    let (c, run) = api.get(&format!("/api/runs/{bad}")).await;
    assert_eq!(c, 200, "{run}");
    let (c, agents) = api.get("/api/agents").await;
    assert_eq!(c, 200, "{agents}");
    let (c, b) = api.get(&format!("/api/runs/{bad}/export")).await;
    assert_eq!(error_of(c, &b).0, 409);
    let (c, b) = api
        .post(
            "/api/move",
            json!({"agent": format!("run:{bad}"), "position": START}),
        )
        .await;
    assert_eq!(error_of(c, &b).0, 422);
    assert_eq!(api.delete(&format!("/api/runs/{bad}")).await, 204);
    assert_eq!(api.get(&format!("/api/runs/{bad}")).await.0, 404);
    assert_eq!(api.delete(&format!("/api/runs/{bad}")).await, 404);
    assert_eq!(api.get(&format!("/api/runs/{good}/export")).await.0, 200);
    srv.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(unreadable_rows(db): sqlite_unreadable_rows, postgres_unreadable_rows);

/// With two workers, a run cancelled and resumed at once is claimed again (often by the other
/// worker) while its first owner may still be computing a generation: the first owner then
/// writes nothing, and the run ends finished with exactly the records and export of an
/// uninterrupted run.
async fn cancel_and_resume_at_once(db: TestDb) {
    let srv = server_with(&db, |c| c.workers = 2).await;
    let api = Api::of(&srv);
    // About 150 depth-4 games a generation: a few tenths of a second each.
    let config = json!({"population": 6, "depth": 4, "generations": 12, "seed": 21,
                        "fitness": {"games_per_pair": 10}});
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().unwrap().to_string();
    for round in 1..=4u64 {
        api.wait_generations(&id, 2 * round).await;
        let (code, body) = api.post(&format!("/api/runs/{id}/cancel"), json!({})).await;
        if code == 409 {
            break; // finished already
        }
        assert_eq!(code, 200, "{body}");
        let (code, body) = api.post(&format!("/api/runs/{id}/resume"), json!({})).await;
        assert_eq!(code, 200, "{body}");
    }
    check_finishes_as_uninterrupted(&api, &id, &run["config"]).await;
    srv.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(
    cancel_and_resume_at_once(db):
    sqlite_cancel_and_resume_at_once,
    postgres_cancel_and_resume_at_once
);

/// Every error is in the one JSON shape, and none quotes a huge input back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_json_and_short() {
    use reqwest::Method;
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    for (method, path) in [
        (Method::PUT, "/api/runs"),
        (Method::DELETE, "/api/move"),
        (Method::POST, "/api/agents"),
        (Method::DELETE, "/healthz"),
    ] {
        let (c, headers, b) = api.send(method.clone(), path, &[], None).await;
        assert_eq!(error_of(c, &b).0, 405, "{method} {path}: {b}");
        assert!(headers.contains_key("allow"), "{method} {path}");
    }
    for path in [
        "/api/position/start?pits=6&pits=7",
        "/api/runs/00000000-0000-0000-0000-000000000000/generations?since=1&since=2",
    ] {
        let (c, b) = api.get(path).await;
        let (code, field) = error_of(c, &b);
        assert_eq!(code, 400, "{path}: {b}");
        assert!(field.is_some(), "{path}: {b}");
    }
    let huge_position = "4,".repeat(450_000);
    let huge_spec = format!("heuristic:{}", "x".repeat(900_000));
    let huge_key = format!("{{\"{}\": 1}}", "k".repeat(900_000));
    for (path, body) in [
        (
            "/api/move",
            json!({"agent": "random", "position": huge_position}).to_string(),
        ),
        (
            "/api/move",
            json!({"agent": huge_spec, "position": START}).to_string(),
        ),
        (
            "/api/matches",
            json!({"south": "random", "north": {"kind": "x".repeat(900_000)}}).to_string(),
        ),
        ("/api/runs", huge_key),
        (
            "/api/runs",
            json!({"config": {"selection": {"kind": "y".repeat(900_000)}}}).to_string(),
        ),
    ] {
        let (c, b) = api.post_raw(path, body).await;
        let (code, _) = error_of(c, &b);
        assert!((400..500).contains(&code), "{path}: {code}");
        let size = b.to_string().len();
        assert!(
            size < 2000,
            "{path}: a {size}-byte error: {}",
            &b.to_string()[..200]
        );
    }
    srv.shutdown().await;
    db.drop_db().await;
}

/// The SQLite database and its journal are created readable by their owner only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let run = api.create_run(json!({"config": tiny(1, 1)})).await;
    api.wait_status(run["id"].as_str().unwrap(), &["finished"])
        .await;
    let path = db.url.strip_prefix("sqlite://").unwrap().to_string();
    for file in [path.clone(), format!("{path}-wal")] {
        if let Ok(meta) = std::fs::metadata(&file) {
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{file}");
        } else {
            assert!(file.ends_with("-wal"), "{file} is missing");
        }
    }
    srv.shutdown().await;
    db.drop_db().await;
}

/// 404 and 405 answers name the method and the whole path the client sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_and_methods_name_the_path() {
    use reqwest::Method;
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    for (method, path) in [
        (Method::GET, "/api/nope"),
        (Method::POST, "/api/no/such/route"),
        (Method::GET, "/api/runs/x/y/z"),
    ] {
        let (c, _, b) = api.send(method.clone(), path, &[], None).await;
        assert_eq!(error_of(c, &b).0, 404, "{method} {path}");
        assert_eq!(b["error"]["message"], format!("no route {method} {path}"));
    }
    for (method, path) in [
        (Method::DELETE, "/api/runs"),
        (Method::PUT, "/api/move"),
        (Method::DELETE, "/healthz"),
    ] {
        let (c, headers, b) = api.send(method.clone(), path, &[], None).await;
        assert_eq!(error_of(c, &b).0, 405, "{method} {path}");
        assert!(headers.contains_key("allow"));
        let message = b["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("method {method} not allowed on {path} ")),
            "{message}"
        );
    }
    srv.shutdown().await;
    db.drop_db().await;
}

/// JSON routes take only bodies sent as `application/json`: a browser posts `text/plain`,
/// forms and multipart across sites without a CORS preflight, so those must change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_routes_need_the_json_content_type() {
    use reqwest::Method;
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let run = json!({"config": tiny(1, 1)}).to_string();
    let position = json!({"position": START, "move": 1}).to_string();
    let routes = [
        ("/api/runs", run.clone()),
        (
            "/api/move",
            json!({"agent": "random", "position": START}).to_string(),
        ),
        ("/api/position", position.clone()),
        (
            "/api/matches",
            json!({"south": "random", "north": "random", "games": 2}).to_string(),
        ),
        (
            "/api/tournaments",
            json!({"agents": ["random", "greedy"], "games": 2}).to_string(),
        ),
    ];
    let refused: [&[(&str, &str)]; 4] = [
        &[("content-type", "text/plain")],
        &[("content-type", "text/plain;charset=UTF-8")],
        &[("content-type", "application/x-www-form-urlencoded")],
        &[],
    ];
    for (path, body) in &routes {
        for headers in refused {
            let (c, _, b) = api
                .send(Method::POST, path, headers, Some(body.clone()))
                .await;
            assert_eq!(
                error_of(c, &b),
                (415, Some("Content-Type".into())),
                "{path} {headers:?}"
            );
            let message = b["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("application/json"), "{path}: {message}");
        }
    }
    // Nothing was created by any of those.
    assert_eq!(api.get("/api/runs").await.1["runs"], json!([]));

    // Parameters of the JSON type are fine.
    let (c, _, b) = api
        .send(
            Method::POST,
            "/api/position",
            &[("content-type", "application/json; charset=utf-8")],
            Some(position),
        )
        .await;
    assert_eq!(c, 200, "{b}");
    let (c, _, b) = api
        .send(
            Method::POST,
            "/api/runs",
            &[("content-type", "Application/JSON")],
            Some(run),
        )
        .await;
    assert_eq!(c, 201, "{b}");
    api.wait_status(b["id"].as_str().unwrap(), &["finished"])
        .await;
    srv.shutdown().await;
    db.drop_db().await;
}

/// A state change from a web page must come from the server's own pages: any site's page can
/// make a browser POST to a server on localhost, and names itself in `Origin` when it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_change_nothing() {
    use reqwest::Method;
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let json_type = ("content-type", "application/json");
    let body = json!({"config": tiny(1, 1)}).to_string();
    let run = api.create_run(json!({"config": tiny(1, 1)})).await;
    let id = run["id"].as_str().unwrap();
    api.wait_status(id, &["finished"]).await;

    let foreign = [
        "http://evil.example",
        "https://evil.example",
        "null",
        // Another port of the same host is another origin.
        &format!("http://127.0.0.1:{}", srv.addr.port() + 1),
        &format!("http://localhost:{}", srv.addr.port() + 1),
        // The server speaks http: an https page of the same host is another site's.
        &format!("https://127.0.0.1:{}", srv.addr.port()),
        // DNS rebinding: the attacker's name, pointed at this server, sends its own Host.
        &format!("http://evil.example:{}", srv.addr.port()),
    ];
    for origin in foreign {
        for (method, path, body) in [
            (Method::POST, "/api/runs".to_string(), Some(body.clone())),
            (
                Method::POST,
                format!("/api/runs/{id}/resume"),
                Some("{}".to_string()),
            ),
            (Method::DELETE, format!("/api/runs/{id}"), None),
            (Method::PUT, "/api/runs".to_string(), Some(body.clone())),
        ] {
            let (c, headers, b) = api
                .send(
                    method.clone(),
                    &path,
                    &[json_type, ("origin", origin)],
                    body,
                )
                .await;
            assert_eq!(
                error_of(c, &b),
                (403, Some("Origin".into())),
                "{method} {path} from {origin}"
            );
            assert!(!headers.contains_key("access-control-allow-origin"));
        }
        // Reads stay open, and still get no CORS headers.
        let (c, headers, _) = api
            .send(Method::GET, "/api/runs", &[("origin", origin)], None)
            .await;
        assert_eq!(c, 200);
        assert!(!headers.contains_key("access-control-allow-origin"));
    }
    let (_, list) = api.get("/api/runs").await;
    assert_eq!(list["runs"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(
        api.get(&format!("/api/runs/{id}")).await.1["status"],
        "finished"
    );

    // DNS rebinding, as the browser sends it: the attacker's name in both Host and Origin.
    // The Host header is not the server's origin; before, this created a run.
    for host in ["evil.example", &format!("evil.example:{}", srv.addr.port())] {
        let json_body = json!({"config": tiny(1, 1)}).to_string();
        let request = format!(
            "POST /api/runs HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json_body}",
            json_body.len()
        );
        let (answer, _) = raw_exchange(srv.addr, request.as_bytes(), Duration::from_secs(10)).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{host}: {answer}");
        assert_eq!(raw_error(&answer)["error"]["field"], "Host", "{answer}");
    }
    let (_, list) = api.get("/api/runs").await;
    assert_eq!(list["runs"].as_array().unwrap().len(), 1, "{list}");

    // Reads too: a rebinding page must not read runs, exports, metrics or the workers' host
    // names. The health probes answer to any name (orchestrators use their own).
    let host = format!("evil.example:{}", srv.addr.port());
    for path in [
        "/api/runs".to_string(),
        format!("/api/runs/{id}/export"),
        "/metrics".to_string(),
        "/api/workers".to_string(),
        "/".to_string(),
    ] {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nConnection: close\r\n\r\n"
        );
        let (answer, _) = raw_exchange(srv.addr, request.as_bytes(), Duration::from_secs(10)).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "GET {path}: {answer}");
        assert_eq!(raw_error(&answer)["error"]["field"], "Host", "{answer}");
    }
    for path in ["/healthz", "/api/readyz"] {
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let (answer, _) = raw_exchange(srv.addr, request.as_bytes(), Duration::from_secs(10)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "GET {path}: {answer}");
    }
    // By the address or localhost, reads are answered.
    for host in [
        format!("localhost:{}", srv.addr.port()),
        srv.addr.to_string(),
    ] {
        let request =
            format!("GET /api/runs HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let (answer, _) = raw_exchange(srv.addr, request.as_bytes(), Duration::from_secs(10)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{host}: {answer}");
    }

    // The dashboard's own requests name one of the server's public origins: by default its
    // address, and as it is bound to loopback, the localhost forms of it.
    for own in [
        format!("http://localhost:{}", srv.addr.port()),
        format!("http://[::1]:{}", srv.addr.port()),
    ] {
        let (c, _, created) = api
            .send(
                Method::POST,
                "/api/runs",
                &[json_type, ("origin", own.as_str())],
                Some(json!({"config": tiny(1, 1)}).to_string()),
            )
            .await;
        assert_eq!(c, 201, "{own}: {created}");
        let id = created["id"].as_str().unwrap();
        api.wait_status(id, &["finished"]).await;
        assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
    }
    let own = api.base.clone();
    let (c, _, created) = api
        .send(
            Method::POST,
            "/api/runs",
            &[json_type, ("origin", own.as_str())],
            Some(body),
        )
        .await;
    assert_eq!(c, 201, "{created}");
    let second = created["id"].as_str().unwrap();
    api.wait_status(second, &["finished"]).await;
    let (c, _, _) = api
        .send(
            Method::DELETE,
            &format!("/api/runs/{second}"),
            &[("origin", own.as_str())],
            None,
        )
        .await;
    assert_eq!(c, 204);
    srv.shutdown().await;
    db.drop_db().await;
}

/// `--allow-origin` lets another site's pages use the API, with CORS; nobody else gets CORS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_get_cors() {
    use reqwest::Method;
    let db = sqlite_db();
    let srv = server_with(&db, |c| {
        c.allow_origins = vec![
            "http://localhost:3000/".to_string(),
            "HTTPS://Tuner.Example.org:443".to_string(),
        ]
    })
    .await;
    let api = Api::of(&srv);
    let json_type = ("content-type", "application/json");
    let body = json!({"config": tiny(1, 1)}).to_string();

    // A body refused for its declared size is refused inside CORS: the page can read why.
    let (answer, _) = raw_exchange(
        srv.addr,
        b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:3000\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n",
        Duration::from_secs(5),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: http://localhost:3000"),
        "{answer}"
    );

    for origin in ["http://localhost:3000", "https://tuner.example.org"] {
        // The preflight a browser sends before a JSON POST with the token.
        let (c, headers, _) = api
            .send(
                Method::OPTIONS,
                "/api/runs",
                &[
                    ("origin", origin),
                    ("access-control-request-method", "POST"),
                    (
                        "access-control-request-headers",
                        "content-type,authorization",
                    ),
                ],
                None,
            )
            .await;
        assert!((200..300).contains(&c), "preflight from {origin}: {c}");
        assert_eq!(headers["access-control-allow-origin"], origin);
        let methods = headers["access-control-allow-methods"].to_str().unwrap();
        for m in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            assert!(methods.contains(m), "{methods}");
        }
        let allowed = headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase();
        assert!(
            allowed.contains("content-type") && allowed.contains("authorization"),
            "{allowed}"
        );

        let (c, headers, run) = api
            .send(
                Method::POST,
                "/api/runs",
                &[json_type, ("origin", origin)],
                Some(body.clone()),
            )
            .await;
        assert_eq!(c, 201, "{run}");
        assert_eq!(headers["access-control-allow-origin"], origin);
        api.wait_status(run["id"].as_str().unwrap(), &["finished"])
            .await;
        // Its pages can read refusals too.
        let (c, headers, b) = api
            .send(
                Method::POST,
                "/api/runs",
                &[("content-type", "text/plain"), ("origin", origin)],
                Some(body.clone()),
            )
            .await;
        assert_eq!(error_of(c, &b).0, 415);
        assert_eq!(headers["access-control-allow-origin"], origin);
    }

    // Anyone else: refused, and no CORS headers, preflight or not.
    let evil = "http://evil.example";
    let (_, headers, _) = api
        .send(
            Method::OPTIONS,
            "/api/runs",
            &[("origin", evil), ("access-control-request-method", "POST")],
            None,
        )
        .await;
    assert!(!headers.contains_key("access-control-allow-origin"));
    let (c, headers, b) = api
        .send(
            Method::POST,
            "/api/runs",
            &[json_type, ("origin", evil)],
            Some(body.clone()),
        )
        .await;
    assert_eq!(error_of(c, &b).0, 403);
    assert!(!headers.contains_key("access-control-allow-origin"));
    // The server's own pages still pass.
    let (c, _, run) = api
        .send(
            Method::POST,
            "/api/runs",
            &[json_type, ("origin", api.base.as_str())],
            Some(body),
        )
        .await;
    assert_eq!(c, 201, "{run}");
    api.wait_status(run["id"].as_str().unwrap(), &["finished"])
        .await;
    assert_eq!(
        api.get("/api/runs").await.1["runs"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    srv.shutdown().await;
    db.drop_db().await;
}

/// An allow-list entry that is not an origin stops the server from starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_allowed_origins_are_refused() {
    for bad in [
        "localhost:3000",
        "http://localhost:3000/app",
        "*",
        "ftp://x.example",
    ] {
        let db = sqlite_db();
        let mut config = kalah_tuner::server::ServerConfig::new("127.0.0.1:0", db.url.clone());
        config.allow_origins = vec![bad.to_string()];
        let err = match kalah_tuner::server::start(config).await {
            Ok(srv) => {
                srv.shutdown().await;
                panic!("{bad} was accepted");
            }
            Err(e) => e,
        };
        assert!(
            err.is::<kalah_tuner::server::InvalidServerConfig>(),
            "{bad}: {err:#}"
        );
        assert!(format!("{err}").contains("--allow-origin"), "{err}");
        db.drop_db().await;
    }
}

/// `--public-origin` names the origins of the server's own pages (behind a proxy, by a
/// name); they replace the bound address's, and a malformed one stops the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_origins_replace_the_bound_address() {
    let db = sqlite_db();
    let srv = server_with(&db, |c| {
        c.public_origins = vec!["https://Tuner.Example.org/".to_string()];
    })
    .await;
    let api = Api::of(&srv);
    let post = |origin: String| {
        let api = &api;
        async move {
            api.send(
                reqwest::Method::POST,
                "/api/runs",
                &[("content-type", "application/json"), ("origin", &origin)],
                Some(json!({"config": tiny(1, 5)}).to_string()),
            )
            .await
        }
    };
    let (code, _, body) = post("https://tuner.example.org".into()).await;
    assert_eq!(code, 201, "{body}");
    for refused in [
        api.base.clone(),
        format!("http://localhost:{}", srv.addr.port()),
        "http://tuner.example.org".to_string(),
    ] {
        let (code, _, body) = post(refused.clone()).await;
        assert_eq!(
            error_of(code, &body),
            (403, Some("Origin".into())),
            "{refused}"
        );
    }
    srv.shutdown().await;
    for bad in ["tuner.example.org", "https://tuner.example.org/app", "*"] {
        let mut config = kalah_tuner::server::ServerConfig::new("127.0.0.1:0", db.url.clone());
        config.public_origins = vec![bad.to_string()];
        match kalah_tuner::server::start(config).await {
            Ok(srv) => {
                srv.shutdown().await;
                panic!("{bad} was accepted");
            }
            Err(e) => assert!(format!("{e}").contains("--public-origin"), "{e}"),
        }
    }
    db.drop_db().await;
}

/// Every compute request is bounded by the API's limits table: a move or a match that needs
/// more positions than one move may search is stopped and refused (the `perfect:22` solve on a
/// 12-pit board once ran for over 5 minutes), and a client that goes away stops its move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_requests_are_bounded_and_stop_with_their_client() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let twelve = "1,1,1,1,1,1,1,1,1,1,1,1/13/1,1,1,1,1,1,1,1,1,1,0,0/15/S";
    let (code, err) = api
        .post(
            "/api/move",
            json!({"agent": "perfect:22", "position": twelve}),
        )
        .await;
    // Refused by the position cap (422), or, on a machine so loaded that 20 M positions take
    // longer than the deadline, by the deadline (503): bounded either way.
    assert_eq!(err["error"]["field"], "agent", "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    match code {
        422 => assert!(message.contains("20000000 positions"), "{message}"),
        503 => assert!(message.contains("deadline"), "{message}"),
        _ => panic!("{code}: {err}"),
    }

    // The same solve met in the middle of a match's games.
    let (code, err) = api
        .post(
            "/api/matches",
            json!({"south": "perfect:22", "north": "greedy", "games": 2, "board": {"pits": 12, "seeds": 2}}),
        )
        .await;
    assert_eq!(code, 422, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("positions"),
        "{err}"
    );

    // Two moves of ten seconds each fill both interactive threads; their clients hang up.
    let thinker = json!({"agent": {"kind": "mcts", "time_ms": 10000}, "position": "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S"}).to_string();
    let mut sockets = Vec::new();
    for _ in 0..2 {
        let mut socket = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
        let request = format!(
            "POST /api/move HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{thinker}",
            srv.addr,
            thinker.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut socket, request.as_bytes())
            .await
            .unwrap();
        sockets.push(socket);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(sockets);
    // Were the two searches still running, this move would wait for a thread until they end,
    // 9.5 s from now. Stopped, they free the threads within milliseconds; 5 s is a wide margin
    // on either side.
    let asked = std::time::Instant::now();
    let (code, mv) = api
        .post(
            "/api/move",
            json!({"agent": "greedy", "position": "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S"}),
        )
        .await;
    let waited = asked.elapsed();
    assert_eq!(code, 200, "{mv}");
    assert!(
        waited < Duration::from_secs(5),
        "a move waited {waited:?} for the searches of clients that had gone"
    );
    srv.shutdown().await;
    db.drop_db().await;
}

/// With both compute slots held by long matches, a move is not queued past its deadline: it
/// is answered 503 with `Retry-After` at once, in the error shape. Once the matches' clients
/// go, moves are answered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_compute_pool_answers_503_at_once() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let heavy = json!({"south": {"kind": "mcts", "time_ms": 2000}, "north": {"kind": "mcts", "time_ms": 2000},
        "games": 2, "board": {"pits": 12, "seeds": 6}})
    .to_string();
    let mut sockets = Vec::new();
    for _ in 0..2 {
        let mut socket = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
        let request = format!(
            "POST /api/matches HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{heavy}",
            srv.addr,
            heavy.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut socket, request.as_bytes())
            .await
            .unwrap();
        sockets.push(socket);
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let greedy = json!({"agent": "greedy", "position": START}).to_string();
    let asked = std::time::Instant::now();
    let (code, headers, body) = api
        .send(
            reqwest::Method::POST,
            "/api/move",
            &[("content-type", "application/json")],
            Some(greedy.clone()),
        )
        .await;
    let waited = asked.elapsed();
    assert_eq!(error_of(code, &body).0, 503, "{body}");
    assert_eq!(
        headers.get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1"),
        "{headers:?}"
    );
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
    assert!(
        leaked_words(body["error"]["message"].as_str().unwrap_or_default()).is_empty(),
        "{body}"
    );
    drop(sockets);
    let asked = std::time::Instant::now();
    loop {
        let (code, b) = api.post_raw("/api/move", greedy.clone()).await;
        if code == 200 {
            break;
        }
        assert_eq!(code, 503, "{b}");
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "the slots of clients that went away stay taken"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    srv.shutdown().await;
    db.drop_db().await;
}

/// A run that would store more generation records than a server keeps for one run is refused
/// at creation with the figure; a deleted run gives its space back (SQLite's file shrinks).
async fn storage_budgets(db: &TestDb) {
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let thirteen = json!([
        "hoard",
        "side_seeds",
        "mobility",
        "my_store",
        "rightmost_empty",
        "neg_opp_store",
        "extra_turns",
        "store_diff",
        "win_margin",
        "neg_opp_margin",
        "side_diff",
        "overflow_diff",
        "capturable_diff"
    ]);
    let huge = json!({"population": 1000, "generations": 5000, "depth": 1, "features": thirteen,
        "fitness": {"mode": "opponents", "opponents": ["random"], "games_per_pair": 2}});
    let (c, b) = api.post("/api/runs", json!({"config": huge})).await;
    assert_eq!(
        error_of(c, &b),
        (422, Some("config.generations".into())),
        "{b}"
    );
    let message = b["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("GB of generation records") && message.contains("at most 1.0 GB"),
        "{message}"
    );
    let (_, list) = api.get("/api/runs").await;
    assert_eq!(list["runs"], json!([]), "{list}");

    // Within the budget: a run of a few hundred kilobytes of records, stored then deleted.
    let config = json!({"population": 60, "generations": 8, "depth": 1, "seed": 5, "features": thirteen,
        "fitness": {"mode": "opponents", "opponents": ["random"], "games_per_pair": 2}});
    let run = api.create_run(json!({"config": config})).await;
    let id = run["id"].as_str().unwrap().to_string();
    assert_eq!(
        api.wait_status(&id, &["finished", "failed"]).await["status"],
        "finished"
    );
    let pages = || async {
        if !db.url.starts_with("sqlite:") {
            return None;
        }
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&db.url).await.expect("database");
        let n: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&pool)
            .await
            .expect("page count");
        pool.close().await;
        Some(n)
    };
    let before = pages().await;
    assert_eq!(api.delete(&format!("/api/runs/{id}")).await, 204);
    assert_eq!(api.get(&format!("/api/runs/{id}")).await.0, 404);
    if let (Some(before), Some(after)) = (before, pages().await) {
        // 60 individuals with 13 weights for 8 generations: some 200 KB, 50 pages of 4 KB.
        assert!(
            after + 40 < before,
            "the file kept the deleted run's pages: {before} pages before, {after} after"
        );
    }
    srv.shutdown().await;
}

on_both_backends!(storage_budgets(&db): sqlite_storage_budgets, postgres_storage_budgets);

/// A record's estimated bytes hold for a large benchmark panel, whose pair points (leaders x
/// agents x pairs) are most of a record: within 2x above what is stored. And the runs queued
/// and running together may have only so much still to write: a run past that is refused
/// (429, naming `config`, with the figures) until one ends.
async fn storage_estimates_hold_and_pending_runs_are_capped(db: &TestDb) {
    let panel = json!({"population": 8, "depth": 1, "generations": 1, "seed": 3,
        "fitness": {"games_per_pair": 2},
        "benchmark": {"panel": ["random", "greedy", "minimax:1", "pekar"], "pairs": 100, "leaders": 8, "every": 1}});
    let long = long_config(11);
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let estimate = |config: Value| {
        let api = &api;
        async move {
            let (code, e) = api
                .post("/api/runs/estimate", json!({"config": config}))
                .await;
            assert_eq!(code, 200, "{e}");
            e["estimated_storage_bytes"].as_u64().unwrap() / e["records"].as_u64().unwrap()
        }
    };
    let per_record = estimate(panel.clone()).await;
    let run = api.create_run(json!({"config": panel})).await;
    let id = run["id"].as_str().unwrap().to_string();
    assert_eq!(
        api.wait_status(&id, &["finished", "failed"]).await["status"],
        "finished"
    );
    let (_, record) = api.get(&format!("/api/runs/{id}/generations/0")).await;
    let stored = record.to_string().len() as u64;
    assert!(
        stored <= per_record && per_record <= 2 * stored,
        "a record with a panel of 4 agents x 100 pairs x 9 players: {stored} bytes stored, {per_record} estimated"
    );
    let long_bytes = estimate(long.clone()).await * 50;
    srv.shutdown().await;

    let srv = server_with(db, |c| c.max_pending_storage_bytes = long_bytes * 3 / 2).await;
    let api = Api::of(&srv);
    let first = api.create_run(json!({"config": long})).await;
    let first = first["id"].as_str().unwrap().to_string();
    let (code, refused) = api
        .post("/api/runs", json!({"config": long_config(12)}))
        .await;
    assert_eq!(
        error_of(code, &refused),
        (429, Some("config".into())),
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("still to write") && message.contains("at most"),
        "{message}"
    );
    assert_eq!(
        api.post(&format!("/api/runs/{first}/cancel"), json!({}))
            .await
            .0,
        200
    );
    let (code, created) = api
        .post("/api/runs", json!({"config": long_config(12)}))
        .await;
    assert_eq!(code, 201, "{created}");
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        api.post(&format!("/api/runs/{id}/cancel"), json!({}))
            .await
            .0,
        200
    );
    srv.shutdown().await;
}

on_both_backends!(
    storage_estimates_hold_and_pending_runs_are_capped(&db):
    sqlite_storage_estimates_hold_and_pending_runs_are_capped,
    postgres_storage_estimates_hold_and_pending_runs_are_capped
);

/// `GET /api/runs` comes in pages that follow each other by cursor, newest first, without a
/// run missed or repeated; the default page is the dashboard's.
async fn runs_are_paged(db: &TestDb) {
    let srv = server(db, None).await;
    let api = Api::of(&srv);
    let mut ids = Vec::new();
    for seed in 0..5 {
        let run = api.create_run(json!({"config": tiny(1, seed)})).await;
        ids.push(run["id"].as_str().unwrap().to_string());
    }
    let (c, all) = api.get("/api/runs").await;
    assert_eq!(c, 200, "{all}");
    assert_eq!(all["next_cursor"], Value::Null, "{all}");
    let everything: Vec<Value> = all["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(everything.len(), 5);
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/runs?limit=2&cursor={c}"),
            None => "/api/runs?limit=2".to_string(),
        };
        let (c, page) = api.get(&path).await;
        assert_eq!(c, 200, "{page}");
        pages += 1;
        let runs = page["runs"].as_array().unwrap();
        assert!(runs.len() <= 2, "{page}");
        paged.extend(runs.iter().map(|r| r["id"].clone()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(paged, everything);
    for (path, field) in [
        ("/api/runs?limit=501", "limit"),
        ("/api/runs?limit=0", "limit"),
        ("/api/runs?cursor=zz", "cursor"),
        ("/api/runs?cursor=6162", "cursor"),
    ] {
        let (c, b) = api.get(path).await;
        assert_eq!(
            error_of(c, &b),
            (422, Some(field.to_string())),
            "{path}: {b}"
        );
    }
    for id in ids {
        api.wait_status(&id, &["finished", "failed"]).await;
    }
    srv.shutdown().await;
}

on_both_backends!(runs_are_paged(&db): sqlite_runs_are_paged, postgres_runs_are_paged);

/// `POST /api/runs/estimate` is a dry run of `POST /api/runs`: the same checks and errors, the
/// config the run would get and its cost from the server's one cost model, and nothing stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_estimate_is_a_dry_run_of_creating_a_run() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let (code, ga) = api
        .post("/api/runs/estimate", json!({"preset": "abrams"}))
        .await;
    assert_eq!(code, 200, "{ga}");
    assert_eq!(ga["tuner"], "ga");
    assert_eq!(ga["records"], ga["config"]["generations"], "{ga}");
    let hours = ga["estimated_core_hours"].as_f64().unwrap();
    assert!(
        hours > 0.0 && hours < ga["max_core_hours"].as_f64().unwrap(),
        "{ga}"
    );
    assert!(ga["estimated_storage_bytes"].as_u64().unwrap() > 0, "{ga}");
    let (code, td) = api
        .post(
            "/api/runs/estimate",
            json!({"tuner": "td", "config": {"games": 64}}),
        )
        .await;
    assert_eq!(code, 200, "{td}");
    assert_eq!(td["tuner"], "td");
    assert_eq!(td["config"]["games"], 64);
    let (code, bad) = api
        .post("/api/runs/estimate", json!({"config": {"population": 1}}))
        .await;
    assert_eq!(
        error_of(code, &bad),
        (422, Some("config.population".into())),
        "{bad}"
    );
    let (_, list) = api.get("/api/runs").await;
    assert_eq!(
        list["runs"],
        json!([]),
        "an estimate stores nothing: {list}"
    );
    srv.shutdown().await;
}

/// Tournaments play on their own share of the cores (half of them), at most two at a time
/// and each on its own part of that share: the others wait `queued` (in their row, shown by
/// every route) rather than claim to run, every one that says `running` makes progress (a
/// second one once sat at 0 behind the first on a shared thread), and while long ones play a
/// sub-second run is not held up behind them (it was held `running` for 60 s when
/// tournaments played on the runs' pool). A queued tournament can be cancelled and never
/// plays.
async fn tournaments_queue_for_their_own_cores(db: TestDb) {
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    // The test servers have two game threads: half of them, one, plays tournaments.
    let playing = 1;
    // Some 100 s each on one thread: still playing at every look below.
    let long = json!({"agents": ["mcts:20000", "mcts:20000:1.0"], "games": 100, "seed": 2});
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (code, t) = api.post("/api/tournaments", long.clone()).await;
        assert_eq!(code, 202, "{t}");
        assert_eq!(t["status"], "queued", "{t}");
        ids.push(t["id"].as_str().unwrap().to_string());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let statuses = loop {
        let mut statuses = Vec::new();
        for id in &ids {
            let (code, t) = api.get(&format!("/api/tournaments/{id}")).await;
            assert_eq!(code, 200, "{t}");
            statuses.push(t["status"].as_str().unwrap_or("").to_string());
        }
        if statuses.iter().filter(|s| *s == "running").count() == playing {
            break statuses;
        }
        assert!(std::time::Instant::now() < deadline, "{statuses:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Each running one plays: its progress moves within seconds (a game takes about one).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut stalled = Vec::new();
        for id in &ids {
            let (_, t) = api.get(&format!("/api/tournaments/{id}")).await;
            if t["status"] == "running" && t["progress"].as_f64().unwrap_or(0.0) <= 0.0 {
                stalled.push(id.clone());
            }
        }
        if stalled.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "running and not playing: {stalled:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        statuses.iter().filter(|s| *s == "queued").count(),
        3 - playing,
        "{statuses:?}"
    );
    let queued = statuses
        .iter()
        .position(|s| s == "queued")
        .unwrap_or_else(|| panic!("one of three waits at least: {statuses:?}"));
    let (_, listed) = api.get("/api/tournaments").await;
    let listed_status = listed["tournaments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == ids[queued].as_str())
        .map(|t| t["status"].clone());
    assert_eq!(listed_status, Some(json!("queued")), "{listed}");

    let started = std::time::Instant::now();
    let run = api.create_run(json!({"config": tiny(2, 5)})).await;
    let done = api
        .wait_status(run["id"].as_str().unwrap(), &["finished", "failed"])
        .await;
    assert_eq!(done["status"], "finished", "{done}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "a sub-second run took {took:?} beside two tournaments"
    );

    let (code, t) = api
        .post(
            &format!("/api/tournaments/{}/cancel", ids[queued]),
            json!({}),
        )
        .await;
    assert_eq!(code, 200, "{t}");
    assert_eq!(t["status"], "cancelled", "{t}");
    for id in &ids {
        let _ = api
            .post(&format!("/api/tournaments/{id}/cancel"), json!({}))
            .await;
    }
    let (_, t) = api.get(&format!("/api/tournaments/{}", ids[queued])).await;
    assert_eq!(t["status"], "cancelled", "{t}");
    assert_eq!(
        t["progress"], 0.0,
        "a cancelled queued tournament never played: {t}"
    );
    srv.shutdown().await;

    // With four game threads, two tournament threads: two tournaments play at once, each on
    // a thread of its own, and both make progress.
    let srv = server_with(&db, |c| c.threads = Some(4)).await;
    let api = Api::of(&srv);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (code, t) = api.post("/api/tournaments", long.clone()).await;
        assert_eq!(code, 202, "{t}");
        ids.push(t["id"].as_str().unwrap().to_string());
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let mut playing = 0;
        for id in &ids {
            let (_, t) = api.get(&format!("/api/tournaments/{id}")).await;
            if t["status"] == "running" && t["progress"].as_f64().unwrap_or(0.0) > 0.0 {
                playing += 1;
            }
        }
        if playing == 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "two running tournaments do not both play"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for id in &ids {
        let _ = api
            .post(&format!("/api/tournaments/{id}/cancel"), json!({}))
            .await;
    }
    srv.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(
    tournaments_queue_for_their_own_cores(db):
    sqlite_tournaments_queue_for_their_own_cores,
    postgres_tournaments_queue_for_their_own_cores
);

/// `GET /metrics`: Prometheus's text format with runs by status, the queues, batches, each
/// worker's games a second and the permits in use.
async fn metrics_are_served_for_prometheus(db: TestDb, backend: &str) {
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let run = api
        .create_run(
            json!({"config": {"population": 4, "depth": 2, "generations": 2, "seed": 9,
                                      "fitness": {"games_per_pair": 10}}}),
        )
        .await;
    let done = api
        .wait_status(run["id"].as_str().unwrap(), &["finished", "failed"])
        .await;
    assert_eq!(done["status"], "finished", "{done}");
    let response = api
        .client
        .get(format!("{}/metrics", api.base))
        .send()
        .await
        .expect("GET /metrics");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = response.text().await.unwrap();
    let value = |line_start: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(line_start))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {line_start} in\n{text}"))
    };
    assert_eq!(value("kalah_tuner_runs{status=\"finished\"}"), 1.0);
    assert_eq!(value("kalah_tuner_runs{status=\"queued\"}"), 0.0);
    assert_eq!(value("kalah_tuner_run_queue_depth "), 0.0);
    assert_eq!(
        value("kalah_tuner_permits_in_use{kind=\"interactive\"}"),
        0.0
    );
    // Two game threads, one of them for tournaments: one plays at a time.
    assert_eq!(value("kalah_tuner_permits{kind=\"tournament\"}"), 1.0);
    assert_eq!(value("kalah_tuner_runs_evolving "), 0.0);
    assert!(
        value("kalah_tuner_generations_written_total ") >= 2.0,
        "{text}"
    );
    assert!(value("kalah_tuner_games_total ") > 0.0, "{text}");
    if backend == "postgres" {
        // The run's games went through the job queue and this server's batch worker.
        assert!(value("kalah_tuner_batch_results ") > 0.0, "{text}");
        assert!(value("kalah_tuner_worker_games_per_second{worker=\"serve@") > 0.0);
        assert!(value("kalah_tuner_worker_batches{worker=\"serve@") > 0.0);
        assert_eq!(value("kalah_tuner_batch_queue_depth "), 0.0);
    } else {
        assert!(!text.contains("kalah_tuner_batch_queue_depth"), "{text}");
    }
    assert!(text.ends_with("# EOF\n"), "{text}");
    srv.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(
    metrics_are_served_for_prometheus(db, backend):
    sqlite_metrics_are_served_for_prometheus,
    postgres_metrics_are_served_for_prometheus
);
