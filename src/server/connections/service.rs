//! The router as hyper calls it on one connection, telling the connection's [`Conn`] when a request
//! starts (its head is in), when the handler answers and when the answer is written.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use tower::ServiceExt;

use super::Conn;

pub struct Tracked {
    router: Router,
    conn: Arc<Conn>,
}

impl Tracked {
    pub fn new(router: Router, conn: Arc<Conn>) -> Self {
        Tracked { router, conn }
    }
}

/// Ends request `tag` when dropped: with the answer's body once hyper has written it, or with the
/// handler's future if the connection goes before it answers.
struct Finish {
    conn: Arc<Conn>,
    tag: u64,
}

impl Drop for Finish {
    fn drop(&mut self) {
        self.conn.finished(self.tag);
    }
}

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let finish = Finish { conn: Arc::clone(&self.conn), tag: self.conn.request_started() };
        let answer = self.router.clone().oneshot(request);
        Box::pin(async move {
            let response = answer.await?;
            finish.conn.answered(finish.tag);
            Ok(response.map(|body| TrackedBody { body, _finish: finish }))
        })
    }
}

/// An answer's body that ends its request when hyper is done with it.
pub struct TrackedBody {
    body: Body,
    _finish: Finish,
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
