//! A server a class shares: users made with `kalah-tuner users` on the server's database, each
//! with a token; a run belongs to its creator, and only they or an admin may change it, while
//! everyone reads it; a removed user's token stops working at once.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{pg_db, server, sqlite_db, Api, TestDb};

/// Runs `kalah-tuner users ARGS --database-url URL`, returning (exit code, stdout, stderr).
fn users(db: &TestDb, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .arg("users")
        .args(args)
        .args(["--database-url", &db.url])
        .output()
        .expect("kalah-tuner users");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

fn add_user(db: &TestDb, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["add", name];
    args.extend_from_slice(extra);
    let (code, token, err) = users(db, &args);
    assert_eq!(code, 0, "users add {name}: {err}");
    assert_eq!(
        token.len(),
        64,
        "a 64-digit token on standard output: {token:?}"
    );
    token
}

async fn patch(api: &Api, path: &str, body: Value) -> (u16, Value) {
    let (code, _, answer) = api
        .send(
            reqwest::Method::PATCH,
            path,
            &[("content-type", "application/json")],
            Some(body.to_string()),
        )
        .await;
    (code, answer)
}

fn as_user(api: &Api, token: &str) -> Api {
    Api {
        base: api.base.clone(),
        client: api.client.clone(),
        token: Some(token.to_string()),
    }
}

/// A run long enough to be running while the users argue over it.
fn long_run() -> Value {
    json!({"name": "alice's run", "config": {"population": 4, "generations": 5000, "depth": 1}})
}

async fn owners_and_admins(db: TestDb) {
    let alice_token = add_user(&db, "alice", &[]);
    let bob_token = add_user(&db, "bob", &["--quota-core-hours", "2"]);
    let (code, _, err) = users(&db, &["add", "alice"]);
    assert_eq!(code, 2, "a second alice is refused as bad input: {err}");
    assert!(err.contains("already exists"), "{err}");
    let (code, _, err) = users(&db, &["add", "no spaces"]);
    assert_eq!(code, 2, "{err}");
    let (code, list, _) = users(&db, &["list"]);
    assert_eq!(code, 0);
    assert!(list.contains("alice\tuser\tno quota"), "{list}");
    assert!(list.contains("bob\tuser\t2 core-hours"), "{list}");

    let srv = server(&db, Some("root-token")).await;
    let anonymous = Api::of(&srv);
    let alice = as_user(&anonymous, &alice_token);
    let bob = as_user(&anonymous, &bob_token);
    let root = as_user(&anonymous, "root-token");

    // With users, a state change needs a token even where the server's own is not given.
    let (code, err) = anonymous.post("/api/runs", long_run()).await;
    assert_eq!(code, 401, "{err}");

    let run = alice.create_run(long_run()).await;
    let id = run["id"].as_str().expect("an id").to_string();
    assert_eq!(run["owner"], "alice", "{run}");
    let path = format!("/api/runs/{id}");

    // Everyone reads it.
    for reader in [&anonymous, &bob] {
        let (code, shown) = reader.get(&path).await;
        assert_eq!(code, 200);
        assert_eq!(shown["owner"], "alice");
    }
    // Bob changes none of it.
    let (code, err) = patch(&bob, &path, json!({"name": "bob's now"})).await;
    assert_eq!(code, 403, "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("alice")),
        "{err}"
    );
    let (code, err) = bob.post(&format!("{path}/cancel"), json!({})).await;
    assert_eq!(code, 403, "{err}");
    assert_eq!(bob.delete(&path).await, 403);
    // Alice does, and the server's own token may change anything.
    let (code, renamed) = patch(&alice, &path, json!({"name": "mine"})).await;
    assert_eq!(code, 200, "{renamed}");
    assert_eq!(renamed["name"], "mine");
    let (code, err) = bob.post(&format!("{path}/resume"), json!({})).await;
    assert_eq!(code, 403, "{err}");
    let (code, cancelled) = root.post(&format!("{path}/cancel"), json!({})).await;
    assert_eq!(code, 200, "{cancelled}");

    // An admin user changes other users' runs too.
    let admin_token = add_user(&db, "teacher", &["--admin"]);
    let teacher = as_user(&anonymous, &admin_token);
    let bobs = bob.create_run(long_run()).await;
    let bobs_path = format!("/api/runs/{}", bobs["id"].as_str().expect("an id"));
    assert_eq!(bobs["owner"], "bob");
    // Bob's quota of 2 core-hours, his running run counted, does not take Hunter's GA for
    // 2,000 generations (about 4.5 core-hours), and the refusal says by how much.
    let big = json!({"preset": "hunter", "config": {"generations": 2000}});
    let (code, err) = bob.post("/api/runs", big).await;
    assert_eq!(code, 429, "{err}");
    let message = err["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("bob has used") && message.contains("quota of 2 core-hours"),
        "{message}"
    );
    let (code, err) = alice.post(&format!("{bobs_path}/cancel"), json!({})).await;
    assert_eq!(code, 403, "{err}");
    let (code, cancelled) = teacher
        .post(&format!("{bobs_path}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{cancelled}");

    // A removed user's token stops working at once; a new token replaces the old one.
    let (code, _, err) = users(&db, &["remove", "bob"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = bob.post("/api/runs/estimate", long_run()).await;
    assert_eq!(code, 401, "{err}");
    let (code, new_token, err) = users(&db, &["token", "alice"]);
    assert_eq!(code, 0, "{err}");
    let (code, _) = alice.post("/api/runs/estimate", long_run()).await;
    assert_eq!(code, 401, "the old token");
    let (code, _) = as_user(&anonymous, &new_token)
        .post("/api/runs/estimate", long_run())
        .await;
    assert_eq!(code, 200, "the new token");
    let (code, _, err) = users(&db, &["remove", "nobody"]);
    assert_eq!(code, 2, "{err}");

    assert_eq!(root.delete(&path).await, 204);
    assert_eq!(teacher.delete(&bobs_path).await, 204);
    srv.shutdown().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_changed_only_by_its_owner_or_an_admin_sqlite() {
    owners_and_admins(sqlite_db()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_changed_only_by_its_owner_or_an_admin_postgres() {
    let Some(db) = pg_db().await else { return };
    owners_and_admins(db).await;
}

/// A server without users and without a token stays open, as before users existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_users_or_token_stays_open() {
    let db = sqlite_db();
    let srv = server(&db, None).await;
    let api = Api::of(&srv);
    let (code, estimate) = api.post("/api/runs/estimate", long_run()).await;
    assert_eq!(code, 200, "{estimate}");
    srv.shutdown().await;
    db.drop_db().await;
}

/// Users take turns for the workers: with alice's three runs queued before bob's one, the
/// second run claimed is bob's, and alice's next one comes after it; a running run yields to
/// another user who waits with fewer runs running, and the freed slot goes to that user.
async fn turns(db: TestDb) {
    use kalah_tuner::store::{NewRun, Store};
    use kalah_tuner::tune::TunerConfig;
    let store = Store::connect(&db.url).await.expect("store");
    let make = |id: &str, user: &str| NewRun {
        id: id.into(),
        name: None,
        preset: None,
        config: TunerConfig::new(kalah_tuner::ga::GaConfig::default()),
        features: json!([]),
        created_by: Some(user.into()),
    };
    for (id, user) in [
        ("a1", "alice"),
        ("a2", "alice"),
        ("a3", "alice"),
        ("b1", "bob"),
    ] {
        store.create_run(&make(id, user)).await.expect("run");
        // created_at orders the queue; keep the four apart.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let mut order = Vec::new();
    let mut claims = std::collections::HashMap::new();
    for _ in 0..3 {
        let run = store.claim_next("w").await.expect("claim").expect("a run");
        claims.insert(run.id.clone(), run.claim);
        order.push(run.id);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(order, ["a1", "b1", "a2"]);

    // Running runs yield to another user who waits with fewer runs running.
    let yields = |id: &'static str| {
        let store = &store;
        async move { store.should_yield(id).await.expect("should_yield") }
    };
    assert!(!yields("a1").await, "no one else waits");
    store.create_run(&make("b2", "bob")).await.expect("run");
    assert!(
        yields("a1").await,
        "bob waits with 1 running against alice's 2"
    );
    assert!(
        !yields("b1").await,
        "alice's waiting run has more running than bob"
    );
    assert!(store.release("a1", claims["a1"]).await.expect("release"));
    let next = store.claim_next("w").await.expect("claim").expect("a run");
    assert_eq!(
        next.id, "b2",
        "bob's turn: his last claim is older than alice's"
    );
    assert!(
        yields("b1").await,
        "now alice waits with 1 running against bob's 2"
    );
    drop(store);
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_take_turns_for_the_workers_sqlite() {
    turns(sqlite_db()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_take_turns_for_the_workers_postgres() {
    let Some(db) = pg_db().await else { return };
    turns(db).await;
}

/// Tournaments and SPRT tests belong to whoever started them, as runs do: another user's
/// cancel is 403 naming the owner, everyone reads them, the owner and an admin may stop them.
async fn played_rows_are_owned(db: TestDb) {
    let alice_token = add_user(&db, "alice", &[]);
    let bob_token = add_user(&db, "bob", &[]);
    let srv = server(&db, Some("root-token")).await;
    let anonymous = Api::of(&srv);
    let alice = as_user(&anonymous, &alice_token);
    let bob = as_user(&anonymous, &bob_token);
    let root = as_user(&anonymous, "root-token");

    // Long enough to be still playing while they argue over it.
    let (code, test) = alice
        .post(
            "/api/sprt-tests",
            json!({"a": "minimax:6", "b": "minimax:5", "sprt": "0,5", "max_pairs": 2000}),
        )
        .await;
    assert_eq!(code, 202, "{test}");
    assert_eq!(test["owner"], "alice");
    let test_id = test["id"].as_str().unwrap();
    let (code, tournament) = alice
        .post(
            "/api/tournaments",
            json!({"agents": ["minimax:7", "minimax:6", "minimax:5"], "games": 100}),
        )
        .await;
    assert_eq!(code, 202, "{tournament}");
    let tournament_id = tournament["id"].as_str().unwrap();
    let (_, shown) = anonymous
        .get(&format!("/api/tournaments/{tournament_id}"))
        .await;
    assert_eq!(shown["owner"], "alice", "{shown}");

    for path in [
        format!("/api/sprt-tests/{test_id}/cancel"),
        format!("/api/tournaments/{tournament_id}/cancel"),
    ] {
        let (code, err) = bob.post(&path, json!({})).await;
        assert_eq!(code, 403, "{path}: {err}");
        assert!(
            err["error"]["message"].as_str().unwrap().contains("alice"),
            "{err}"
        );
    }
    let (code, stopped) = alice
        .post(&format!("/api/sprt-tests/{test_id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 200, "{stopped}");
    assert_eq!(stopped["status"], "cancelled");
    let (code, stopped) = root
        .post(
            &format!("/api/tournaments/{tournament_id}/cancel"),
            json!({}),
        )
        .await;
    assert_eq!(code, 200, "an admin stops anyone's: {stopped}");
    srv.shutdown().await;
    db.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournaments_and_sprt_tests_are_stopped_only_by_their_owner_or_an_admin_sqlite() {
    played_rows_are_owned(sqlite_db()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournaments_and_sprt_tests_are_stopped_only_by_their_owner_or_an_admin_postgres() {
    let Some(db) = pg_db().await else { return };
    played_rows_are_owned(db).await;
}
