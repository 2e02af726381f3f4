//! `predicate-extender`: parse flags, start logging, serve until SIGTERM or Ctrl-C.
#![forbid(unsafe_code)]
// Production code: every `pub` is reachable from outside (else `pub(crate)`), and nothing a request,
// a file or the API server sends reaches a panic (tests, and test support, may panic: clippy.toml).
#![deny(unreachable_pub)]
#![deny(clippy::panic)]

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use cli::explain::ExplainArgs;
use cli::serve::{LogFormat, ServeArgs};
use cli::{Cli, Command};
use predicate_extender::explain::table::Style;
use tracing_subscriber::EnvFilter;

mod cli;

// mimalloc: the request path allocates many small objects (a decoded node has dozens) from 16
// evaluator threads; glibc's malloc spent a third of a 5,000-node `Nodes` decode in malloc/free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Explain(args) => explain(args),
        Command::Whatif(args) => {
            let style = Style::for_terminal(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
            print_or_fail(cli::whatif::output(&args, style))
        }
        Command::SchedulerConfig(args) => print_or_fail(cli::scheduler_config::output(&args)),
    }
}

fn explain(args: ExplainArgs) -> ExitCode {
    let style = Style::for_terminal(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR").as_deref());
    print_or_fail(cli::explain::output(&args, style))
}

/// A command's text on standard output, or its error on standard error with exit status 2.
fn print_or_fail(result: Result<String, impl std::fmt::Display>) -> ExitCode {
    match result {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("predicate-extender: {e}");
            ExitCode::from(2)
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colour only for a person at a terminal, and never when NO_COLOR is set.
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    init_logging(args.log_format);
    let config = match args.to_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("predicate-extender: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("predicate-extender: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        // Listened for before the server starts: a SIGTERM that arrives once "listening" is logged
        // must not find the default action (the process killed, no exit code) still in place.
        let shutdown = shutdown_signal();
        let server = match predicate_extender::server::start(config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("predicate-extender: {e}");
                return ExitCode::from(2);
            }
        };
        shutdown.await;
        tracing::info!("shutting down: finishing in-flight requests");
        // Exit 0 even when the grace ran out and connections were cut: a shutdown that was asked
        // for is not a failure (kubelet would SIGKILL after terminationGracePeriodSeconds anyway).
        match server.shutdown().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("predicate-extender: {e}");
                ExitCode::FAILURE
            }
        }
    });
    // Dropping the runtime would wait for any blocking task (a DNS lookup, say) without bound.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// Resolves on SIGTERM (what kubelet sends) or Ctrl-C. The handlers are in place when this
/// returns (tokio installs a signal's handler when its stream is made, not when it is awaited).
#[cfg(unix)]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    let listen =
        |kind: SignalKind, what: &str| signal(kind).map_err(|e| tracing::warn!("cannot listen for {what}: {e}")).ok();
    let received = |stream: Option<Signal>| async move {
        match stream {
            Some(mut s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    let (terminate, interrupt) =
        (listen(SignalKind::terminate(), "SIGTERM"), listen(SignalKind::interrupt(), "Ctrl-C"));
    async move {
        tokio::select! {
            _ = received(terminate) => {},
            _ = received(interrupt) => {},
        }
    }
}

#[cfg(not(unix))]
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    }
}
