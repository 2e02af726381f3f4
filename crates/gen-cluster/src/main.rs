//! `gen-cluster`: writes a synthetic cluster, its pending pod or a /filter request for it
//! (`gen-cluster --help`), for load runs and measurements of the extender.
#![forbid(unsafe_code)]
#![deny(unreachable_pub)]
#![deny(clippy::panic)]

use std::process::ExitCode;

use clap::Parser;
use gen_cluster::cli;

fn main() -> ExitCode {
    let args = cli::GenClusterArgs::parse();
    match cli::run(&args) {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-cluster: {e}");
            ExitCode::from(2)
        }
    }
}
