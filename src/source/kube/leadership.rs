//! Whether the kube-scheduler beside this extender (the same pod, so the same hostname) holds its
//! Lease: the leader, which calls this extender, or a standby, which does not until it takes over.
//! A standby's extender keeps its model warm all the same (its watches run, `/readyz` says ready
//! once they have listed), so a takeover finds it ready; `predicate_extender_leader` says which
//! one a replica is.
//!
//! Read by polling the Lease with a GET every `leaderElection.retryPeriod`, as often as
//! kube-scheduler's own candidates touch it, with only the `get` on that one Lease that its Role
//! already grants. kube-scheduler names itself `<hostname>_<uuid>` in `holderIdentity`
//! (`makeLeaderElectionConfig`, `cmd/kube-scheduler/app/options/options.go`); a Lease whose holder
//! has not renewed within its `leaseDurationSeconds` is held by nobody (client-go's
//! `leaderelection.go` takes it over then; a holder that releases it on shutdown empties
//! `holderIdentity`). By hostname alone: after this pod's kube-scheduler restarts with a new uuid,
//! the pod still reads as the leader until the Lease expires or another replica takes it.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client};
use tokio::task::JoinHandle;

use crate::scheduler_config::leader_election::LeaseSpec;

/// What this replica's kube-scheduler is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Not read yet, or the Lease could not be read.
    Unknown,
    Leader,
    Standby,
}

/// The role, as last read; shared by the poller, the metrics and the verbs.
#[derive(Debug, Default)]
pub struct Leadership {
    role: AtomicU8,
    /// Reads of the Lease that failed or timed out (the role is unknown meanwhile).
    read_errors: AtomicU64,
}

impl Role {
    const fn code(self) -> u8 {
        match self {
            Role::Unknown => 0,
            Role::Leader => 1,
            Role::Standby => 2,
        }
    }

    const fn of_code(code: u8) -> Role {
        match code {
            1 => Role::Leader,
            2 => Role::Standby,
            _ => Role::Unknown,
        }
    }
}

impl Leadership {
    pub fn read_errors(&self) -> u64 {
        self.read_errors.load(Ordering::Relaxed)
    }

    pub fn role(&self) -> Role {
        Role::of_code(self.role.load(Ordering::Relaxed))
    }

    /// Sets the role; returns the one before.
    fn set(&self, role: Role) -> Role {
        Role::of_code(self.role.swap(role.code(), Ordering::Relaxed))
    }
}

/// This machine's (this pod's) hostname, which kube-scheduler's identity starts with.
pub fn hostname() -> Option<String> {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_string());
    kernel.filter(|h| !h.is_empty()).or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
}

/// The role of `identity`'s kube-scheduler under `lease` at `now` (`None`: no Lease yet).
fn role_of(lease: Option<&Lease>, identity: &str, now: Timestamp) -> Role {
    let Some(spec) = lease.and_then(|l| l.spec.as_ref()) else { return Role::Standby };
    let Some(holder) = spec.holder_identity.as_deref().filter(|h| !h.is_empty()) else { return Role::Standby };
    // Held, unless its holder stopped renewing: then it is anyone's to take, and nobody leads.
    if let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) {
        let expired = renewed.0.checked_add(jiff_seconds(seconds)).is_ok_and(|until| until < now);
        if expired {
            return Role::Standby;
        }
    }
    let holder_host = holder.split_once('_').map_or(holder, |(host, _)| host);
    if holder_host == identity {
        Role::Leader
    } else {
        Role::Standby
    }
}

fn jiff_seconds(seconds: i32) -> k8s_openapi::jiff::SignedDuration {
    k8s_openapi::jiff::SignedDuration::from_secs(i64::from(seconds))
}

/// Polls `lease` every retry period, for `identity`'s role, into `leadership`.
pub fn spawn(client: Client, lease: LeaseSpec, identity: String, leadership: Arc<Leadership>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let api: Api<Lease> = Api::namespaced(client, &lease.namespace);
        let mut tick = tokio::time::interval(lease.retry_period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tick.tick().await;
            let read = tokio::time::timeout(lease.retry_period.max(Duration::from_secs(1)), api.get_opt(&lease.name));
            let role = match read.await {
                Ok(Ok(found)) => {
                    failing = false;
                    role_of(found.as_ref(), &identity, Timestamp::now())
                }
                failed => {
                    let error = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "no answer within the retry period".to_string(),
                    };
                    if !failing {
                        tracing::warn!(lease = %format!("{}/{}", lease.namespace, lease.name), %error,
                            "cannot read kube-scheduler's Lease; whether this replica leads is unknown until it can");
                    }
                    failing = true;
                    leadership.read_errors.fetch_add(1, Ordering::Relaxed);
                    Role::Unknown
                }
            };
            let before = leadership.set(role);
            if before != role {
                tracing::info!(role = ?role, previous = ?before, identity = %identity, "kube-scheduler's leadership");
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec as Spec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn lease(holder: &str, renewed: Timestamp, seconds: i32) -> Lease {
        Lease {
            spec: Some(Spec {
                holder_identity: Some(holder.to_string()),
                renew_time: Some(MicroTime(renewed)),
                lease_duration_seconds: Some(seconds),
                ..Spec::default()
            }),
            ..Lease::default()
        }
    }

    #[test]
    fn the_holder_s_hostname_leads_until_its_lease_expires() {
        let now: Timestamp = "2026-12-07T10:00:00Z".parse().unwrap();
        let renewed: Timestamp = "2026-12-07T09:59:50Z".parse().unwrap();
        let held = lease("sched-7d9f-abcde_2f6a0c1e-1111-2222-3333-444455556666", renewed, 15);
        assert_eq!(role_of(Some(&held), "sched-7d9f-abcde", now), Role::Leader);
        assert_eq!(role_of(Some(&held), "sched-7d9f-fghij", now), Role::Standby);
        // A prefix of the holder's hostname is another pod.
        assert_eq!(role_of(Some(&held), "sched-7d9f", now), Role::Standby);
        // Not renewed for 15s: nobody leads.
        let later: Timestamp = "2026-12-07T10:00:06Z".parse().unwrap();
        assert_eq!(role_of(Some(&held), "sched-7d9f-abcde", later), Role::Standby);
        // No Lease yet, or released (kube-scheduler empties holderIdentity when it releases).
        assert_eq!(role_of(None, "sched-7d9f-abcde", now), Role::Standby);
        let released = lease("", renewed, 15);
        assert_eq!(role_of(Some(&released), "sched-7d9f-abcde", now), Role::Standby);
    }

    #[test]
    fn the_role_is_read_back_as_set() {
        let leadership = Leadership::default();
        assert_eq!(leadership.role(), Role::Unknown);
        assert_eq!(leadership.set(Role::Leader), Role::Unknown);
        assert_eq!(leadership.set(Role::Standby), Role::Leader);
        assert_eq!(leadership.role(), Role::Standby);
    }
}
