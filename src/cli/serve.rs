//! `predicate-extender serve`: its flags, each validated here (an invalid one stops startup with a
//! message that names it), and the server configuration they make.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use predicate_engine::engine::OrderingMode;
use predicate_engine::quantity::Quantity;
use predicate_extender::server::{ConnectionLimits, PolicySource, ServeConfig, TlsFiles};

use super::{ClusterArgs, KubeSchedulerArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address for the verbs. Loopback by default: as a sidecar, kube-scheduler calls over
    /// loopback, and /bind must not be open to the pod network. Any other address needs client
    /// certificates (--client-ca-file) or --insecure-listen-without-client-certificates.
    #[arg(long, default_value = "127.0.0.1:8888")]
    pub listen: SocketAddr,

    /// Serve the verbs on a non-loopback --listen without requiring client certificates: anyone
    /// who reaches the address can then /bind any pending pod to any node with the extender's
    /// service account. Only where something else (a NetworkPolicy, a private network) keeps
    /// everyone but kube-scheduler out.
    #[arg(long)]
    pub insecure_listen_without_client_certificates: bool,

    /// Address for /healthz, /readyz and /metrics (Prometheus), reachable by kubelet probes and
    /// scrapers at the pod IP.
    #[arg(long, default_value = "0.0.0.0:8889")]
    pub admin_listen: SocketAddr,

    /// Path prefix of the verbs: with /scheduler they are /scheduler/filter, /scheduler/prioritize,
    /// /scheduler/preempt and /scheduler/bind.
    #[arg(long, default_value = "", value_parser = parse_url_prefix)]
    pub url_prefix: String,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub kube_scheduler: KubeSchedulerArgs,

    /// Live cluster: how long a watch may keep failing before /readyz turns 503.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub max_cache_staleness: Duration,

    /// Live cluster: how long a pod bound by the extender counts on its node before the watch
    /// confirms the binding (kube-scheduler's assume cache).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub assume_ttl: Duration,

    /// A scheduler Policy file (JSON or YAML) choosing and ordering the predicates and weighting
    /// the priorities; read again when it changes, or on SIGHUP (a change that does not load is
    /// logged and the previous plan kept).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// How the predicates are ordered: static (the Policy's order, else the static rank) or
    /// dynamic (learned: cheap and often-rejecting first, predicates that only fail unresolvably
    /// before the others, Policy-pinned entries kept first); overrides the Policy's
    /// `predicateOrdering`.
    #[arg(long, value_name = "static|dynamic", value_parser = parse_ordering)]
    pub predicate_ordering: Option<OrderingMode>,

    /// Node evaluator workers [default: the CPUs this process may use (cgroup quota and affinity
    /// included), at most 16, upstream's ParallelizeUntil workers]; never more than the nodes.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub parallelism: Option<u16>,

    /// /filter and /prioritize bodies up to this size (Kubernetes suffixes work) are answered on the
    /// thread that read them, one node after another, without waking the evaluator's workers; 0
    /// sends every request to the workers.
    #[arg(long, default_value = "32Ki", value_parser = parse_byte_size_or_zero)]
    pub inline_max_bytes: usize,

    /// Largest request body accepted, in bytes; Kubernetes suffixes work (128Mi).
    #[arg(long, default_value = "128Mi", value_parser = parse_byte_size)]
    pub max_body_bytes: usize,

    /// Deadline of one request; past it the evaluation is cancelled and `Error` says so. Keep it
    /// below kube-scheduler's httpTimeout (5s by default).
    #[arg(long, default_value = "4s", value_parser = parse_duration)]
    pub request_timeout: Duration,

    /// Deadline of one `POST <url-prefix>/whatif`, which evaluates every pod of the scheduler under
    /// two Policies (docs/whatif.md).
    #[arg(long, default_value = "2m", value_parser = parse_duration)]
    pub whatif_timeout: Duration,

    /// Serve read-only web pages on the verbs listener, beside /explain: the pending pods, a pod's
    /// explain as a grid, the what-if report for a pasted Policy (`<url-prefix>/ui`, docs/whatif.md).
    #[arg(long)]
    pub web: bool,

    /// Serve the verbs over HTTPS with this PEM certificate (and any intermediates after it);
    /// reloaded when the file changes. Needs --tls-private-key-file.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,

    /// The PEM private key of --tls-cert-file (PKCS#8, PKCS#1 or SEC1); reloaded with it.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,

    /// Require a client certificate signed by a CA in this PEM file (kube-scheduler's
    /// tlsConfig.certFile/keyFile). Only with --tls-cert-file; reloaded when it changes.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub client_ca_file: Option<PathBuf>,

    /// On SIGTERM, how long in-flight requests may take before their connections are closed and
    /// the process exits. Keep it below the pod's terminationGracePeriodSeconds.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub shutdown_grace: Duration,

    /// Both listeners: how long a client may take from connecting (TLS handshake included) to the
    /// end of its first request's head, and from the first byte of a later request to the end of
    /// its head; past it the connection is closed.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,

    /// Both listeners: how long a request body may take to arrive once its head is in (past it the
    /// verb answers 408 with its result object and Error), and the client to take the answer.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub body_timeout: Duration,

    /// Both listeners: how long a kept-alive connection may wait for its next request. Longer than
    /// the 90s after which kube-scheduler's HTTP client closes an idle connection itself.
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    pub idle_timeout: Duration,

    /// Open connections per listener. When full, a new connection sheds the oldest one stalled
    /// partway through its first request head, else the one idle longest, else one silent for
    /// 250ms; while every connection is in the middle of a request, new ones wait to be accepted.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,

    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

impl ServeArgs {
    /// The server configuration; `Err` when no cluster source is given or found.
    pub(crate) fn to_config(&self) -> Result<ServeConfig, String> {
        self.check_listen_is_guarded()?;
        let mut config = ServeConfig::new(self.cluster.source()?);
        config.scheduler_version = self.kube_scheduler.kube_scheduler_version;
        config.scheduler_config = self.kube_scheduler.scheduler_config.clone();
        config.listen = self.listen;
        config.admin_listen = self.admin_listen;
        config.url_prefix = self.url_prefix.clone();
        config.policy = self.policy.clone().map(PolicySource::File).unwrap_or(PolicySource::Default);
        config.predicate_ordering = self.predicate_ordering;
        if let Some(parallelism) = self.parallelism {
            config.parallelism = usize::from(parallelism);
        }
        config.inline_max_bytes = self.inline_max_bytes;
        config.max_body_bytes = self.max_body_bytes;
        config.request_timeout = self.request_timeout;
        config.whatif_timeout = self.whatif_timeout;
        config.web = self.web;
        config.max_cache_staleness = self.max_cache_staleness;
        config.assume_ttl = self.assume_ttl;
        config.shutdown_grace = self.shutdown_grace;
        config.connections = ConnectionLimits {
            header_read_timeout: self.header_read_timeout,
            body_timeout: self.body_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self.max_connections as usize,
        };
        // clap's `requires` has made sure the two come together.
        if let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_private_key_file) {
            config.tls =
                Some(TlsFiles { cert: cert.clone(), key: key.clone(), client_ca: self.client_ca_file.clone() });
        }
        Ok(config)
    }

    /// The verbs include /bind, which binds any pod the caller names with the extender's service
    /// account: served beyond loopback, they need client certificates or the explicit opt-out.
    fn check_listen_is_guarded(&self) -> Result<(), String> {
        let guarded = self.listen.ip().is_loopback()
            || self.client_ca_file.is_some()
            || self.insecure_listen_without_client_certificates;
        if guarded {
            return Ok(());
        }
        Err(format!(
            "--listen {}: not a loopback address, and no --client-ca-file: anyone who reaches it could \
             /bind any pending pod to any node with the extender's service account. Listen on loopback \
             (kube-scheduler as a sidecar, the shipped deployment), require client certificates \
             (--tls-cert-file, --tls-private-key-file and --client-ca-file, with kube-scheduler's \
             tlsConfig.certFile and keyFile), or pass --insecure-listen-without-client-certificates \
             when something else keeps everyone but kube-scheduler out",
            self.listen
        ))
    }
}

fn parse_url_prefix(s: &str) -> Result<String, String> {
    let trimmed = s.trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    if !trimmed.starts_with('/') {
        return Err(format!("must be empty or start with '/', as in /scheduler (got {s:?})"));
    }
    if trimmed.contains(['?', '#', '{', '}', '*']) || trimmed.contains("//") {
        return Err(format!("must be a plain path such as /scheduler (got {s:?})"));
    }
    Ok(trimmed.to_string())
}

fn parse_byte_size(s: &str) -> Result<usize, String> {
    match parse_byte_size_or_zero(s)? {
        0 => Err(format!("must be a positive number of bytes (got {s:?})")),
        n => Ok(n),
    }
}

fn parse_byte_size_or_zero(s: &str) -> Result<usize, String> {
    let q = Quantity::parse(s).map_err(|e| e.to_string())?;
    let n = q.value();
    if n < 0 {
        return Err(format!("must be a number of bytes, 0 or more (got {s:?})"));
    }
    usize::try_from(n).map_err(|_| format!("too large (got {s:?})"))
}

fn parse_ordering(s: &str) -> Result<OrderingMode, String> {
    s.parse()
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 4s, 500ms)"))?;
    if d.is_zero() {
        return Err("must be longer than zero".to_string());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        let mut argv = vec!["predicate-extender", "serve"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv) {
            Ok(Cli { command: Command::Serve(a) }) => Ok(a),
            Ok(Cli { command: other }) => Err(format!("not serve: {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn defaults() {
        let a = parse(&["--demo"]).unwrap();
        let c = a.to_config().unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8888");
        assert_eq!(c.admin_listen.to_string(), "0.0.0.0:8889");
        assert_eq!(c.url_prefix, "");
        // The CPUs this process may use, at most 16.
        let cpus = std::thread::available_parallelism().map_or(16, |n| n.get().min(16));
        assert_eq!(c.parallelism, cpus);
        assert_eq!(c.max_body_bytes, 128 << 20);
        assert_eq!(
            c.inline_max_bytes,
            predicate_extender::server::DEFAULT_INLINE_MAX_BYTES,
            "the flag's default is the library's"
        );
        assert_eq!(c.request_timeout, Duration::from_secs(4));
        assert_eq!(c.shutdown_grace, Duration::from_secs(10));
        assert_eq!(c.tls, None);
        assert_eq!(c.connections, ConnectionLimits::default(), "the flags' defaults are the library's");
        let limits = c.connections;
        assert_eq!(limits.header_read_timeout, Duration::from_secs(5));
        assert_eq!(limits.body_timeout, Duration::from_secs(10));
        assert_eq!(limits.idle_timeout, Duration::from_secs(120));
        assert_eq!(limits.max_connections, 64);
    }

    #[test]
    fn tls_flags_come_as_a_pair_and_the_client_ca_only_with_them() {
        for (args, flag) in [
            (vec!["--demo", "--tls-cert-file", "c.pem"], "--tls-private-key-file"),
            (vec!["--demo", "--tls-private-key-file", "k.pem"], "--tls-cert-file"),
            (vec!["--demo", "--client-ca-file", "ca.pem"], "--tls-cert-file"),
            (vec!["--demo", "--shutdown-grace", "soon"], "--shutdown-grace"),
        ] {
            let e = parse(&args).unwrap_err();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
        let a = parse(&["--demo", "--tls-cert-file", "c.pem", "--tls-private-key-file", "k.pem"]).unwrap();
        let tls = a.to_config().unwrap().tls.unwrap();
        assert_eq!((tls.cert.to_str(), tls.key.to_str(), tls.client_ca), (Some("c.pem"), Some("k.pem"), None));
        let a = parse(&[
            "--demo",
            "--tls-cert-file",
            "c.pem",
            "--tls-private-key-file",
            "k.pem",
            "--client-ca-file",
            "ca.pem",
            "--shutdown-grace",
            "30s",
        ])
        .unwrap();
        let c = a.to_config().unwrap();
        assert_eq!(c.tls.unwrap().client_ca, Some(PathBuf::from("ca.pem")));
        assert_eq!(c.shutdown_grace, Duration::from_secs(30));
    }

    #[test]
    fn a_listener_beyond_loopback_needs_client_certificates_or_the_opt_out() {
        for listen in ["0.0.0.0:8888", "10.1.2.3:8888", "[::]:8888"] {
            let e = parse(&["--demo", "--listen", listen]).unwrap().to_config().unwrap_err();
            assert!(
                e.contains(&format!("--listen {listen}"))
                    && e.contains("--client-ca-file")
                    && e.contains("--insecure-listen-without-client-certificates"),
                "{listen}: {e}"
            );
        }
        let tls = ["--tls-cert-file", "c.pem", "--tls-private-key-file", "k.pem"];
        let with = |extra: &[&str]| {
            let mut args = vec!["--demo", "--listen", "0.0.0.0:8888"];
            args.extend_from_slice(extra);
            parse(&args).unwrap().to_config()
        };
        // HTTPS alone authenticates the server, not the caller: still refused.
        assert!(with(&tls).is_err(), "HTTPS without client certificates");
        let mut mutual = tls.to_vec();
        mutual.extend(["--client-ca-file", "ca.pem"]);
        assert!(with(&mutual).is_ok(), "client certificates required");
        assert!(with(&["--insecure-listen-without-client-certificates"]).is_ok(), "the opt-out");
        for loopback in ["127.0.0.1:8888", "127.0.0.2:9000", "[::1]:8888"] {
            assert!(parse(&["--demo", "--listen", loopback]).unwrap().to_config().is_ok(), "{loopback}");
        }
    }

    #[test]
    fn invalid_flags_are_named() {
        let cases = [
            (vec!["--demo", "--listen", "localhost"], "--listen"),
            (vec!["--demo", "--url-prefix", "scheduler"], "--url-prefix"),
            (vec!["--demo", "--parallelism", "0"], "--parallelism"),
            (vec!["--demo", "--max-body-bytes", "lots"], "--max-body-bytes"),
            (vec!["--demo", "--max-body-bytes", "0"], "--max-body-bytes"),
            (vec!["--demo", "--inline-max-bytes=-1"], "--inline-max-bytes"),
            (vec!["--demo", "--inline-max-bytes", "some"], "--inline-max-bytes"),
            (vec!["--demo", "--request-timeout", "4"], "--request-timeout"),
            (vec!["--demo", "--log-format", "xml"], "--log-format"),
            (vec!["--demo", "--cluster-snapshot", "c.json"], "--cluster-snapshot"),
            (vec!["--demo", "--kubeconfig", "k.yaml"], "--kubeconfig"),
            (vec!["--demo", "--assume-ttl", "0s"], "--assume-ttl"),
            (vec!["--demo", "--header-read-timeout", "0s"], "--header-read-timeout"),
            (vec!["--demo", "--body-timeout", "soon"], "--body-timeout"),
            (vec!["--demo", "--idle-timeout", "5"], "--idle-timeout"),
            (vec!["--demo", "--max-connections", "0"], "--max-connections"),
            (vec!["--demo", "--kube-scheduler-version", "1.34"], "--kube-scheduler-version"),
        ];
        for (args, flag) in cases {
            let e = parse(&args).unwrap_err();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }

    #[test]
    fn values() {
        let a =
            parse(&["--demo", "--url-prefix", "/scheduler/", "--max-body-bytes", "1Gi", "--request-timeout", "250ms"])
                .unwrap();
        assert_eq!(a.url_prefix, "/scheduler");
        assert_eq!(a.max_body_bytes, 1 << 30);
        assert_eq!(a.request_timeout, Duration::from_millis(250));
        assert_eq!(parse(&["--demo", "--inline-max-bytes", "0"]).unwrap().to_config().unwrap().inline_max_bytes, 0);
        assert_eq!(parse(&["--demo", "--inline-max-bytes", "64Ki"]).unwrap().inline_max_bytes, 64 << 10);

        let a = parse(&[
            "--demo",
            "--header-read-timeout",
            "1s",
            "--body-timeout",
            "2s",
            "--idle-timeout",
            "3s",
            "--max-connections",
            "500",
        ])
        .unwrap();
        let limits = a.to_config().unwrap().connections;
        assert_eq!(
            limits,
            ConnectionLimits {
                header_read_timeout: Duration::from_secs(1),
                body_timeout: Duration::from_secs(2),
                idle_timeout: Duration::from_secs(3),
                max_connections: 500,
            }
        );
    }
}
