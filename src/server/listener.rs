//! One listener's accept loop, plain HTTP/1.1 or over TLS, with the bounds and the cap of
//! [`super::connections`], and a graceful shutdown bounded by a grace: on stop it accepts no more,
//! lets each open connection finish the request it is serving, and closes whatever is still open
//! when the grace runs out.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::server::connections::admission::Admission;
use crate::server::connections::io::TrackedIo;
use crate::server::connections::service::Tracked;
use crate::server::connections::{Conn, ConnectionLimits};
use crate::server::tls::ReloadingTls;

/// Pause after a failed accept (out of file descriptors, say) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Connections the kernel holds for the listener until it accepts them (capped by
/// net.core.somaxconn). Tokio's default, 128, is soon full when hundreds of slow clients reconnect
/// as fast as they are shed, and a full queue drops a new client's SYN: it then waits a second (and
/// three, and seven) to retry, however quickly the listener would have served it.
const ACCEPT_QUEUE: u32 = 1024;

/// A listener on `addr` with [`ACCEPT_QUEUE`].
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_QUEUE)
}

/// How one listener serves.
#[derive(Clone)]
pub struct ListenerSettings {
    /// "verbs" or "admin", for the log.
    pub name: &'static str,
    /// HTTPS with this configuration; `None` serves plain HTTP.
    pub tls: Option<Arc<ReloadingTls>>,
    pub limits: ConnectionLimits,
    /// On stop, how long open connections may take to finish their requests.
    pub grace: Duration,
}

/// Serves `router` until `stop` turns true (or its sender is dropped), then drains. Returns how
/// many connections were still open when the grace ran out (and were closed).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    settings: ListenerSettings,
    mut stop: watch::Receiver<bool>,
) -> usize {
    let mut connections = JoinSet::new();
    let mut admission = Admission::new(settings.name, settings.limits.max_connections);
    let for_connections = stop.clone();
    loop {
        let wait = admission.wait_before_accepting();
        tokio::select! {
            _ = stopped(&mut stop) => break,
            Some(ended) = connections.join_next_with_id(), if !connections.is_empty() => {
                admission.remove(ended.map_or_else(|e| e.id(), |(id, ())| id));
            }
            // Full, with nothing that may give way yet: new connections wait in the accept queue.
            () = tokio::time::sleep_until(wait.unwrap_or_else(tokio::time::Instant::now)), if wait.is_some() => {}
            accepted = listener.accept(), if wait.is_none() => match accepted {
                Ok((stream, peer)) => {
                    if !admission.make_room() {
                        tracing::debug!(listener = settings.name, %peer, "refused a connection: at --max-connections");
                        continue;
                    }
                    let conn = Arc::new(Conn::accepted(settings.tls.is_some()));
                    let serving = connection(stream, peer, Arc::clone(&conn), router.clone(), settings.clone(), for_connections.clone());
                    admission.insert(connections.spawn(serving).id(), conn);
                }
                Err(e) => {
                    tracing::warn!(listener = settings.name, error = %e, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
        }
    }
    drop(listener);
    let drained =
        tokio::time::timeout(settings.grace, async { while connections.join_next().await.is_some() {} }).await;
    if drained.is_ok() {
        return 0;
    }
    connections.abort_all();
    let mut still_open = 0;
    while let Some(ended) = connections.join_next().await {
        still_open += usize::from(ended.is_err_and(|e| e.is_cancelled()));
    }
    still_open
}

/// One connection, closed by its watchdog when it overstays a phase or is shed.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    conn: Arc<Conn>,
    router: Router,
    settings: ListenerSettings,
    stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let stream = TrackedIo::new(stream, Arc::clone(&conn));
    let serving = handshake_and_serve(stream, peer, Arc::clone(&conn), router, settings.tls, stop);
    tokio::select! {
        () = serving => {}
        ended = conn.watch(&settings.limits) => {
            tracing::debug!(listener = settings.name, %peer, "closed a connection: {ended}");
        }
    }
}

async fn handshake_and_serve(
    stream: TrackedIo<TcpStream>,
    peer: SocketAddr,
    conn: Arc<Conn>,
    router: Router,
    tls: Option<Arc<ReloadingTls>>,
    mut stop: watch::Receiver<bool>,
) {
    let Some(tls) = tls else {
        return http(stream, Tracked::new(router, conn), stop).await;
    };
    // The handshake's bound is the watchdog's (--header-read-timeout from the accept).
    let stream = tokio::select! {
        done = tls.acceptor().accept(stream) => match done {
            Ok(stream) => stream,
            Err(e) => {
                tracing::info!(%peer, error = %e, "TLS handshake failed");
                return;
            }
        },
        _ = stopped(&mut stop) => return,
    };
    conn.handshake_done();
    http(stream, Tracked::new(router, conn), stop).await
}

/// HTTP/1.1 on one connection; on stop, the request in progress is answered and the connection closed.
async fn http<S>(stream: S, service: Tracked, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        done = conn.as_mut() => {
            if let Err(e) = done {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            return;
        }
        _ = stopped(&mut stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "connection ended with an error while shutting down");
    }
}

/// Resolves once `stop` turns true or its sender is gone (holding no borrow of the value after).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
