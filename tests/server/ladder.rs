//! The ladder: finished runs' champions enter it with the anchors, the server that holds the
//! lease plays games between them in the background and fits ratings with intervals, every
//! server on the database shows the same table, and a champion is withdrawn by its owner.

use std::process::Command;
use std::time::{Duration, Instant};

use kalah_tuner::server::LadderSettings;
use serde_json::{json, Value};

use crate::support::{on_both_backends, server_with, Api, TestDb};

fn add_user(db: &TestDb, name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args(["users", "add", name, "--database-url", &db.url])
        .output()
        .expect("kalah-tuner users add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn as_user(api: &Api, token: &str) -> Api {
    Api {
        base: api.base.clone(),
        client: api.client.clone(),
        token: Some(token.to_string()),
    }
}

/// Depth 1 on the standard board: the ladder's games take milliseconds.
const LADDER: &str = "/api/ladder?board=6,4&depth=1";

/// Polls the ladder until every champion has played and has a rating; gives up after three
/// minutes (a hang guard, not a timing check).
async fn wait_rated(api: &Api, champions: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let (code, ladder) = api.get(LADDER).await;
        assert_eq!(code, 200, "{ladder}");
        let players = ladder["players"].as_array().cloned().unwrap_or_default();
        let rated = players
            .iter()
            .filter(|p| {
                p["kind"] == "champion" && p["elo"].is_number() && p["trials"].as_u64() > Some(0)
            })
            .count();
        if rated >= champions {
            return ladder;
        }
        assert!(
            Instant::now() < deadline,
            "the champions were never rated: {ladder}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn champions_are_rated_and_withdrawn_by_their_owners(db: TestDb) {
    let alice_token = add_user(&db, "alice");
    let bob_token = add_user(&db, "bob");
    let ladder = LadderSettings {
        share: 1.0,
        depth: 1,
    };
    let first = server_with(&db, |c| {
        c.token = Some("root-token".into());
        c.ladder = ladder;
    })
    .await;
    let second = server_with(&db, |c| {
        c.token = Some("root-token".into());
        c.ladder = ladder;
    })
    .await;
    let anonymous = Api::of(&first);
    let alice = as_user(&anonymous, &alice_token);
    let bob = as_user(&anonymous, &bob_token);

    let (code, empty) = anonymous.get(LADDER).await;
    assert_eq!(code, 200, "{empty}");
    assert_eq!(empty["id"], Value::Null, "no ladder before a run finished");
    assert_eq!(empty["players"], json!([]));

    let mut runs = Vec::new();
    for seed in [1, 2] {
        let run = alice
            .create_run(json!({"name": format!("alice {seed}"), "config": {"seed": seed, "population": 4, "generations": 2, "depth": 1}}))
            .await;
        runs.push(run["id"].as_str().unwrap().to_string());
    }
    for id in &runs {
        anonymous.wait_status(id, &["finished"]).await;
    }
    let rated = wait_rated(&anonymous, 2).await;
    assert_eq!(rated["reference"], "minimax:1");
    assert_eq!(rated["depth"], 1);
    assert_eq!(rated["id"], "6,4 standard depth 1");
    let players = rated["players"].as_array().unwrap();
    let reference = players.iter().find(|p| p["name"] == "minimax:1").unwrap();
    assert_eq!(reference["kind"], "anchor");
    assert_eq!(
        reference["elo"], 0.0,
        "the reference is rated 0: {reference}"
    );
    for id in &runs {
        let me = players.iter().find(|p| p["run_id"] == id.as_str()).unwrap();
        assert_eq!(me["owner"], "alice");
        assert_eq!(me["kind"], "champion");
        let (elo, low, high) = (
            me["elo"].as_f64().unwrap(),
            me["low"].as_f64().unwrap(),
            me["high"].as_f64().unwrap(),
        );
        assert!(
            low < elo && elo < high,
            "an interval around the rating: {me}"
        );
        assert!(me["rank"].as_u64().unwrap() >= 1);
    }
    assert!(
        !rated["history"].as_array().unwrap().is_empty(),
        "ratings over time: {rated}"
    );

    // The run's own ladder, by its id; and every server shows the same table.
    let (code, by_run) = anonymous.get(&format!("/api/ladder?run={}", runs[0])).await;
    assert_eq!(code, 200, "{by_run}");
    assert_eq!(by_run["id"], rated["id"]);
    let (code, none) = anonymous.get("/api/ladder?run=no-such-run").await;
    assert_eq!(code, 404, "{none}");
    let (_, list) = anonymous.get("/api/ladders").await;
    assert_eq!(list["ladders"][0]["board"], "6,4", "{list}");
    // Stop the games, then compare the two servers' tables.
    let other = Api::of(&second);
    let names = |l: &Value| -> Vec<String> {
        l["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, here) = anonymous.get(LADDER).await;
    let (_, there) = other.get(LADDER).await;
    let mut here_ids = names(&here);
    let mut there_ids = names(&there);
    here_ids.sort();
    there_ids.sort();
    assert_eq!(here_ids, there_ids, "both servers list the same players");

    for (query, field) in [
        ("board=6", "board"),
        ("board=0,4", "board"),
        ("rules=fancy", "rules"),
        ("depth=99", "depth"),
    ] {
        let (code, err) = anonymous.get(&format!("/api/ladder?{query}")).await;
        assert!(code == 400 || code == 422, "{query}: {code} {err}");
        assert_eq!(err["error"]["field"], field, "{query}: {err}");
    }

    // Withdrawing: the owner or an admin; anchors only an admin.
    let mine = players
        .iter()
        .find(|p| p["run_id"] == runs[0].as_str())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let withdraw = |id: &str| format!("/api/ladder/players/{id}/withdraw");
    let (code, err) = bob.post(&withdraw(&mine), json!({})).await;
    assert_eq!(code, 403, "{err}");
    let anchor = reference["id"].as_str().unwrap();
    let (code, err) = alice.post(&withdraw(anchor), json!({})).await;
    assert_eq!(code, 403, "an anchor is the admin's: {err}");
    let (code, gone) = alice.post(&withdraw(&mine), json!({})).await;
    assert_eq!(code, 200, "{gone}");
    assert_eq!(gone["withdrawn"], true);
    let (code, err) = alice.post(&withdraw(&mine), json!({})).await;
    assert_eq!(code, 409, "{err}");
    let (code, err) = alice.post(&withdraw("nobody"), json!({})).await;
    assert_eq!(code, 404, "{err}");
    let (_, after) = other.get(LADDER).await;
    let shown = after["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == mine.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        shown["withdrawn"], true,
        "withdrawn on every server: {shown}"
    );
    assert_eq!(shown["rank"], Value::Null);

    // With one server stopped (it gives the lease back if it held it), the other plays on.
    let (_, before) = other.get(LADDER).await;
    first.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, now) = other.get(LADDER).await;
        if now["trials"].as_u64() > before["trials"].as_u64() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no games after a server stopped: {now}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    second.shutdown().await;
    db.drop_db().await;
}

on_both_backends!(champions_are_rated_and_withdrawn_by_their_owners(db): ladder_sqlite, ladder_postgres);
