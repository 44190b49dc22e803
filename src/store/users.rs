//! The users of a shared server (`kalah-tuner users`): a name, admin rights, a quota of
//! core-hours, and the SHA-256 digest of the user's token. The token itself is shown once,
//! when it is made, and never stored, so a copy of the database gives no one a way in.
//!
//! Every server reads the table on each request that needs a user, so a user removed (or a
//! token replaced) through any process stops working at once on every server of the database.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now_rfc3339, run_from_row, RunRow, Store, StoreError, RUN_COLUMNS};

/// A user as stored, without the token's digest.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct User {
    pub(crate) name: String,
    pub(crate) admin: bool,
    /// Core-hours the user's work may take in all; none: no limit.
    pub(crate) quota_core_hours: Option<f64>,
    pub(crate) created_at: String,
}

/// Why a user could not be added.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AddUserError {
    #[error("a user named {0:?} already exists")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

const USER_COLUMNS: &str = "name, admin, quota_core_hours, created_at";

fn user_from_row(row: &AnyRow) -> Result<User, StoreError> {
    Ok(User {
        name: row.try_get("name")?,
        admin: row.try_get::<i64, _>("admin")? != 0,
        quota_core_hours: row.try_get("quota_core_hours")?,
        created_at: row.try_get("created_at")?,
    })
}

impl Store {
    /// Adds a user whose token has the digest `token_sha256` (lower-case hex).
    pub(crate) async fn add_user(
        &self,
        name: &str,
        token_sha256: &str,
        admin: bool,
        quota_core_hours: Option<f64>,
    ) -> Result<User, AddUserError> {
        // Checked first for a clear message; the primary key still refuses a racing twin.
        if self.user_named(name).await?.is_some() {
            return Err(AddUserError::Exists(name.to_string()));
        }
        let created_at = now_rfc3339();
        let inserted = sqlx::query(
            "INSERT INTO users (name, token_sha256, admin, quota_core_hours, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(name)
        .bind(token_sha256)
        .bind(i64::from(admin))
        .bind(quota_core_hours)
        .bind(&created_at)
        .execute(&self.pool)
        .await;
        match inserted {
            Ok(_) => Ok(User {
                name: name.to_string(),
                admin,
                quota_core_hours,
                created_at,
            }),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(AddUserError::Exists(name.to_string()))
            }
            Err(e) => Err(AddUserError::Store(e.into())),
        }
    }

    /// Every user, by name.
    pub(crate) async fn users(&self) -> Result<Vec<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY name");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(user_from_row).collect()
    }

    pub(crate) async fn user_named(&self, name: &str) -> Result<Option<User>, StoreError> {
        self.user_where("name", name).await
    }

    /// The user whose token has this digest.
    pub(crate) async fn user_by_token(
        &self,
        token_sha256: &str,
    ) -> Result<Option<User>, StoreError> {
        self.user_where("token_sha256", token_sha256).await
    }

    /// The user whose `column` (a unique one) holds `value`.
    async fn user_where(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE {column} = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(value)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(user_from_row).transpose()
    }

    /// Whether the server has users at all: with none, it keeps its single-token (or open)
    /// setup.
    pub(crate) async fn has_users(&self) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT name FROM users LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Removes a user; false when there was none of that name. Their runs stay, owned by the
    /// name, for an admin to manage.
    pub(crate) async fn remove_user(&self, name: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM users WHERE name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Gives a user a new token; false when there is no user of that name. The old token
    /// stops working at once.
    pub(crate) async fn set_user_token(
        &self,
        name: &str,
        token_sha256: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE users SET token_sha256 = $1 WHERE name = $2")
            .bind(token_sha256)
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Who created a run: none when there is no such run, `Some(None)` for a run without an
    /// owner. Reads that column alone, so that a run whose other data no longer reads can
    /// still be checked (and deleted).
    pub(crate) async fn run_owner(&self, id: &str) -> Result<Option<Option<String>>, StoreError> {
        let row = sqlx::query("SELECT created_by FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.try_get("created_by").map_err(StoreError::from))
            .transpose()
    }

    /// The runs a user created, for their quota.
    pub(crate) async fn runs_created_by(&self, name: &str) -> Result<Vec<RunRow>, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE created_by = $1");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(name)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(run_from_row).collect()
    }
}
