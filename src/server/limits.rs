//! What one client may hold of the server: connections, time to send a request, body size.
//!
//! `axum::serve` sets no timer on hyper, so a client that opened a connection and sent half a
//! header (or nothing at all) held it for good, and any number of such clients could open
//! connections until the process ran out of file descriptors. The connections are served here
//! with hyper's HTTP/1 builder instead: a header-read timeout that also closes idle keep-alive
//! connections, a deadline for reading a request's body, and a cap on open connections.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::error::{ApiError, BodyDeadline};
use super::state::MAX_BODY_BYTES;

/// Longest a move or match waits for one of the interactive compute slots before it is
/// answered 503 with `Retry-After`: long enough for a slot whose client has just gone away to
/// come free, far shorter than any request's deadline, which the wait counts against.
pub(crate) const MAX_COMPUTE_WAIT: Duration = Duration::from_millis(500);

/// The `Retry-After` of a request refused because every compute slot is taken, in seconds.
pub(crate) const COMPUTE_RETRY_AFTER_SECS: u64 = 1;

/// The server's limits on connections and the time requests may take to arrive.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From a connection's start, or the end of its previous response, to the end of the
    /// next request's headers: slow senders and idle keep-alive connections are closed then.
    pub header_read: Duration,
    /// From the end of a request's headers to the end of its body (answered 408).
    pub body_read: Duration,
    /// Open connections at most; further ones wait in the listen queue until one closes.
    pub max_connections: usize,
    /// Open connections from one IP address at most: one more is answered 503 and closed at
    /// once, so no one client (a script, a slowloris) can hold the connections everyone
    /// needs.
    pub max_connections_per_peer: usize,
    /// Event streams open at once at most (a browser holds one for all its tabs): one more
    /// is answered 503 with `Retry-After`. Well below `max_connections`, so that streams
    /// never hold every connection.
    pub max_event_streams: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(60),
            max_connections: 512,
            max_connections_per_peer: 64,
            max_event_streams: 128,
        }
    }
}

/// The `Retry-After` of a connection or event stream refused because its client holds too
/// many, in seconds.
pub(crate) const CROWDED_RETRY_AFTER_SECS: u64 = 5;

/// Open connections by peer address.
#[derive(Default)]
struct Peers(std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>);

impl Peers {
    /// A seat for one more connection from `ip`, if it holds fewer than `max`.
    fn seat(self: &Arc<Peers>, ip: std::net::IpAddr, max: usize) -> Option<PeerSeat> {
        let mut open = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(PeerSeat {
            peers: self.clone(),
            ip,
        })
    }
}

/// One open connection of a peer, given back when dropped.
struct PeerSeat {
    peers: Arc<Peers>,
    ip: std::net::IpAddr,
}

impl Drop for PeerSeat {
    fn drop(&mut self) {
        let mut open = self.peers.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// What a connection past its peer's cap is told before it is closed: a whole answer in the
/// API's error shape, written without reading the request (the peer may be sending nothing).
fn crowded_answer(max: usize) -> Vec<u8> {
    let body = serde_json::json!({"error": {
        "field": null,
        "message": format!("this address holds {max} connections to the server already, the most one client may: close some and try again"),
        "status": 503,
    }})
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: {CROWDED_RETRY_AFTER_SECS}\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A request that declares a body over the limit is answered 413 at once, before any of the
/// body is read (the body limit alone would first wait for a megabyte to arrive, and answer
/// in axum's plain text); every other request gets its body's deadline.
pub(crate) async fn refuse_large_and_stamp(
    body_read: Duration,
    mut req: Request,
    next: Next,
) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(length) = declared {
        if length > MAX_BODY_BYTES as u64 {
            let mut response = ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                format!(
                    "request body: {length} bytes declared in Content-Length, over the limit of \
                     {MAX_BODY_BYTES} bytes"
                ),
            )
            .into_response();
            // The body is not read, so the connection cannot carry another request.
            response.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return response;
        }
    }
    req.extensions_mut()
        .insert(BodyDeadline(Instant::now() + body_read, body_read));
    next.run(req).await
}

/// Serves `app` on `listener` under `limits` until `stopping` completes, then stops accepting
/// and waits for the open connections to finish their requests (event streams end on the
/// same signal).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stopping: impl Future<Output = ()> + Send + 'static,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read);
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut last_full_log: Option<Instant> = None;
    let peers = Arc::new(Peers::default());
    let crowded = Arc::new(crowded_answer(limits.max_connections_per_peer));
    tokio::pin!(stopping);
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // Once a minute at most: a flood would otherwise flood the log too.
                if last_full_log.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        "connection limit reached: {} connections open, new ones wait until \
                         one closes (--max-connections)",
                        limits.max_connections
                    );
                    last_full_log = Some(Instant::now());
                }
                tokio::select! {
                    permit = permits.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                    _ = &mut stopping => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut stopping => break,
        };
        let Some(seat) = peers.seat(peer.ip(), limits.max_connections_per_peer) else {
            drop(permit);
            let answer = crowded.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut stream = stream;
                // The peer may not read either: a short wait, then the connection is dropped.
                let _ = tokio::time::timeout(Duration::from_secs(1), async {
                    stream.write_all(&answer).await?;
                    stream.shutdown().await
                })
                .await;
            });
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection: {e}");
            }
            drop((permit, seat));
        });
    }
    drop(listener);
    // Computations see the stop and end at once (`compute`); a client that reads slowly must
    // not hold the process.
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after the stop: closed",
            SHUTDOWN_GRACE.as_secs()
        );
    }
}

/// How long a stopping server lets the requests under way finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
