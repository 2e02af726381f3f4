//! Waiting for a condition in a test (a server ready, a watch event applied, a pod bound): the one
//! polling loop every test shares, never a fixed sleep.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// What one poll of [`eventually`] found: done (with a value), or not yet, with what it saw when
/// it can say.
pub trait Probe {
    type Output;
    /// `Ok` when the condition holds; `Err` with what was seen, if anything, when it does not yet.
    fn settled(self) -> Result<Self::Output, Option<String>>;
}

impl<T> Probe for Option<T> {
    type Output = T;
    fn settled(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

impl Probe for bool {
    type Output = ();
    fn settled(self) -> Result<(), Option<String>> {
        if self {
            Ok(())
        } else {
            Err(None)
        }
    }
}

impl<T, E: Display> Probe for Result<T, E> {
    type Output = T;
    fn settled(self) -> Result<T, Option<String>> {
        self.map_err(|e| Some(e.to_string()))
    }
}

/// Polls `check` until it holds (`Some`, `true` or `Ok`) and returns its value; panics after
/// `deadline` naming `what` and, for `Err`, what the last poll said. Polls every `deadline / 200`,
/// at least every 100 ms and at most every 10 ms.
pub async fn eventually<P: Probe, F: Future<Output = P>>(
    what: &str,
    deadline: Duration,
    mut check: impl FnMut() -> F,
) -> P::Output {
    let start = Instant::now();
    let every = (deadline / 200).clamp(Duration::from_millis(10), Duration::from_millis(100));
    loop {
        match check().await.settled() {
            Ok(v) => return v,
            Err(last) if start.elapsed() >= deadline => match last {
                Some(last) => panic!("timed out after {deadline:?} waiting for {what}; last: {last}"),
                None => panic!("timed out after {deadline:?} waiting for {what}"),
            },
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_first_settled_value() {
        let mut n = 0;
        let got = eventually("three polls", Duration::from_secs(5), || {
            n += 1;
            std::future::ready((n == 3).then_some(n))
        })
        .await;
        assert_eq!(got, 3);
        let mut polls = 0;
        eventually("a bool", Duration::from_secs(5), || {
            polls += 1;
            std::future::ready(polls > 1)
        })
        .await;
        let ok: u8 = eventually("a result", Duration::from_secs(5), || std::future::ready(Ok::<u8, String>(7))).await;
        assert_eq!(ok, 7);
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for never; last: still 0")]
    async fn panics_with_what_it_last_saw() {
        eventually("never", Duration::from_millis(30), || std::future::ready(Err::<(), _>("still 0"))).await;
    }
}
