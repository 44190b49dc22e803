//! `kalah-tuner users`: the users of a shared server. Each user gets a token, printed once;
//! the database keeps only its SHA-256 digest. A server with users needs a token for every
//! request that changes state, and lets only a run's owner or an admin change the run.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};

use super::args::usage;
use crate::server::guard::token_digest;
use crate::server::redact;
use crate::store::{AddUserError, Store};

/// `kalah-tuner users` options.
#[derive(Args, Debug)]
pub(crate) struct UsersArgs {
    /// The server's database: sqlite://PATH or postgres://USER@HOST/DB, as `serve` takes it
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://kalah-tuner.db",
        global = true
    )]
    pub database_url: String,
    #[command(subcommand)]
    pub command: UsersCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum UsersCommand {
    /// Add a user and print their token (shown once: the database keeps only its digest)
    Add {
        /// 1 to 40 letters, digits, `-`, `_` or `.`
        name: String,
        /// May change every run, tournament and SPRT test, not only their own
        #[arg(long)]
        admin: bool,
        /// Core-hours the user's work may take in all (default: no limit)
        #[arg(long, value_name = "H")]
        quota_core_hours: Option<f64>,
    },
    /// List the users: name, admin, quota, created
    List,
    /// Remove a user: their token stops working at once on every server of the database
    /// (their runs stay, for an admin to manage)
    Remove { name: String },
    /// Give a user a new token and print it; the old one stops working at once
    Token { name: String },
}

const MAX_USER_NAME_CHARS: usize = 40;

fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_USER_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !ok {
        bail!(usage(format!(
            "a user name has 1 to {MAX_USER_NAME_CHARS} letters, digits, '-', '_' or '.', got {name:?}"
        )));
    }
    Ok(())
}

/// A new token: 244 random bits from the operating system (two version-4 UUIDs), as 64 hex
/// digits.
fn new_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

pub(crate) fn run(args: &UsersArgs) -> Result<()> {
    if let UsersCommand::Add {
        name,
        quota_core_hours,
        ..
    } = &args.command
    {
        check_name(name)?;
        if let Some(quota) = quota_core_hours {
            if !quota.is_finite() || *quota < 0.0 {
                bail!(usage(format!(
                    "--quota-core-hours must be 0 or more, got {quota}"
                )));
            }
        }
    }
    let url = args.database_url.trim();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let store = Store::connect(url)
            .await
            .with_context(|| format!("opening the database {}", redact(url)))?;
        match &args.command {
            UsersCommand::Add {
                name,
                admin,
                quota_core_hours,
            } => {
                let token = new_token();
                match store
                    .add_user(name, &token_digest(&token), *admin, *quota_core_hours)
                    .await
                {
                    Ok(_) => {}
                    Err(AddUserError::Exists(name)) => {
                        bail!(usage(format!("a user named {name:?} already exists")))
                    }
                    Err(AddUserError::Store(e)) => return Err(e).context("adding the user"),
                }
                eprintln!(
                    "added {}{name}; their token, shown only now (send it as Authorization: Bearer <token>):",
                    if *admin { "admin " } else { "" }
                );
                println!("{token}");
            }
            UsersCommand::List => {
                let users = store.users().await.context("reading the users")?;
                if users.is_empty() {
                    eprintln!("no users: the server keeps its single-token (or open) setup");
                }
                for user in users {
                    let quota = user
                        .quota_core_hours
                        .map_or_else(|| "no quota".to_string(), |q| format!("{q} core-hours"));
                    println!(
                        "{}\t{}\t{quota}\tcreated {}",
                        user.name,
                        if user.admin { "admin" } else { "user" },
                        user.created_at
                    );
                }
            }
            UsersCommand::Remove { name } => {
                if !store.remove_user(name).await.context("removing the user")? {
                    bail!(usage(format!("no user named {name:?}")));
                }
                eprintln!("removed {name}: their token no longer works");
            }
            UsersCommand::Token { name } => {
                let token = new_token();
                if !store
                    .set_user_token(name, &token_digest(&token))
                    .await
                    .context("replacing the token")?
                {
                    bail!(usage(format!("no user named {name:?}")));
                }
                eprintln!("{name}'s new token, shown only now (the old one no longer works):");
                println!("{token}");
            }
        }
        Ok(())
    })
}
