//! One listener's accept loop, plain HTTP/1.1 or over TLS, with a graceful shutdown bounded by a
//! grace: on stop it accepts no more, lets each open connection finish the request it is serving,
//! and closes whatever is still open when the grace runs out.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::server::tls::ReloadingTls;

/// A client that connects and never finishes the handshake is dropped after this.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause after a failed accept (out of file descriptors, say) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `router` until `stop` turns true (or its sender is dropped), then drains. Returns how
/// many connections were still open when `grace` ran out (and were closed).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<Arc<ReloadingTls>>,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> usize {
    let mut connections = JoinSet::new();
    let for_connections = stop.clone();
    loop {
        tokio::select! {
            _ = stopped(&mut stop) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    connections.spawn(connection(stream, peer, tls.clone(), router.clone(), for_connections.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(grace, async { while connections.join_next().await.is_some() {} }).await;
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

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<ReloadingTls>>,
    router: Router,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let Some(tls) = tls else {
        return http(stream, router, stop).await;
    };
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, tls.acceptor().accept(stream));
    let stream = tokio::select! {
        done = handshake => match done {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                tracing::info!(%peer, error = %e, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::info!(%peer, "TLS handshake timed out");
                return;
            }
        },
        _ = stopped(&mut stop) => return,
    };
    http(stream, router, stop).await
}

/// HTTP/1.1 on one connection; on stop, the request in progress is answered and the connection closed.
async fn http<S>(stream: S, router: Router, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
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
