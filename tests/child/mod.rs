//! The real binary as a child process: started with JSON logs on ephemeral ports, its log lines
//! collected on a thread, sent SIGTERM, waited for with deadlines.
#![allow(dead_code)] // each test binary uses a different part of this

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");

/// Long enough for a loaded 2-core machine; every wait polls and returns as soon as it can.
pub const DEADLINE: Duration = Duration::from_secs(30);

pub struct Server {
    child: std::process::Child,
    logs: Receiver<Value>,
    /// Every log line read so far.
    pub seen: Vec<Value>,
    /// host:port of the verbs and of the admin listener.
    pub verbs: String,
    pub admin: String,
}

/// A log line's message.
pub fn message(line: &Value) -> &str {
    line["fields"]["message"].as_str().unwrap_or_default()
}

impl Server {
    /// `predicate-extender serve ARGS` on 127.0.0.1:0 for both listeners, once it logs "listening".
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-format", "json"])
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the binary");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, logs) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut server = Server { child, logs, seen: Vec::new(), verbs: String::new(), admin: String::new() };
        let listening = server.wait_log("the 'listening' line", |l| message(l) == "listening");
        server.verbs = listening["fields"]["verbs"].as_str().unwrap().to_string();
        server.admin = listening["fields"]["admin"].as_str().unwrap().to_string();
        server
    }

    /// Waits for a log line matching `pred` (among those already seen, then new ones).
    pub fn wait_log(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_log_since(0, what, pred)
    }

    /// Where the log stands now, for [`Server::wait_log_since`].
    pub fn mark(&mut self) -> usize {
        self.drain_logs();
        self.seen.len()
    }

    /// Waits for a log line matching `pred` that came after `mark`.
    pub fn wait_log_since(&mut self, mark: usize, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(line) = self.seen.iter().skip(mark).find(|l| pred(l)) {
            return line.clone();
        }
        let start = Instant::now();
        loop {
            let left = DEADLINE.checked_sub(start.elapsed()).unwrap_or_default();
            match self.logs.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no log line for {what} within {DEADLINE:?}: {:#?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => panic!("the process ended before {what}: {:#?}", self.seen),
            }
        }
    }

    /// Reads whatever log lines have arrived, without waiting.
    pub fn drain_logs(&mut self) {
        while let Ok(line) = self.logs.try_recv() {
            self.seen.push(line);
        }
    }

    /// The process id (for /proc/<pid>/...).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn sigterm(&self) {
        let kill = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(kill.success());
    }

    /// The exit status, or a panic if the process is still running after `within`.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < within, "still running {within:?} after being asked to stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 POST over a plain socket, returning the body.
pub fn blocking_post(addr: &str, path: &str, body: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    write!(s, "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    s.write_all(body).unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap_or_else(|e| panic!("POST {path}: {e}"));
    out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()
}
