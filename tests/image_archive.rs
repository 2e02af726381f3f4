//! The container images built without Docker (`image/build.sh`, docs/image.md): the extender's is
//! reproducible (two builds, one digest), says what the Dockerfile's final stage says (USER,
//! EXPOSE, ENTRYPOINT, CMD and the binary's path, read from the Dockerfile here, so the two cannot
//! drift), holds every library `ldd` lists, and serves from its unpacked root filesystem mounted
//! read-only, as 65532; the pause image's program is static, runs as 65535 and exits 0 on SIGTERM;
//! the kube-scheduler image takes a static binary and refuses a dynamic one.
//!
//! Every archive is checked as an OCI image layout: each blob's name is its SHA-256, the layer's
//! uncompressed SHA-256 is the config's diff ID, and the layer's and the archive's entries are
//! sorted, dated 1970-01-01 and owned by numeric ids.
//!
//! Without Go (the image tools are Go programs) these tests say SKIPPED on the terminal and pass;
//! `.ci/run` (CI=true) makes that a failure. The runs from the root filesystem need root (chroot,
//! a mount namespace); without it only they are skipped, saying so (a failure under CI).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod child;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// As in crates/testing/src/kube_cluster/binaries.rs: `require` (or CI=true) makes a missing Go a failure.
const REQUIRE_ENV: &str = "PREDICATE_EXTENDER_E2E";

fn required() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "require")
}

/// Says on the terminal that part of a test did not run; under CI that is a failure.
fn skip_part(test: &str, why: &str) {
    assert!(!required(), "image test {test}: {why}");
    let _ = writeln!(std::io::stderr(), "SKIPPED part of {test}: {why}");
}

/// False (after saying so on the terminal) when Go is missing and the run does not require it.
fn go_or_skip(test: &str) -> bool {
    if Command::new("go").arg("version").output().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let why = "Go is not installed: the image tools (image/cmd) are Go programs";
    assert!(!required(), "image test {test}: {why}");
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED image test {test}: {why} (set {REQUIRE_ENV}=require or CI=true to make this a failure)"
    );
    false
}

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// `image/build.sh ARGS...`: the digest on its last line of standard output.
fn build(args: &[&str]) -> String {
    let out = build_script(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "image/build.sh {args:?} failed ({}):\n{stderr}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let digest = stdout.lines().last().unwrap_or_default().trim().to_string();
    assert!(
        digest.len() == 71 && digest.starts_with("sha256:") && digest[7..].bytes().all(|b| b.is_ascii_hexdigit()),
        "image/build.sh {args:?}: last line {digest:?} is not a digest"
    );
    digest
}

fn build_script(args: &[&str]) -> std::process::Output {
    Command::new("bash").arg(Path::new(ROOT).join("image/build.sh")).args(args).output().expect("run image/build.sh")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `tar -tv` of a tar (gzipped when `gzip`) as (mode string, owner, date time, name), each line
/// checked: dated 1970-01-01 00:00:00, owner numeric.
fn listing(tar: &Path, gzip: bool) -> Vec<(String, String, String)> {
    let flags = if gzip { "-tvzf" } else { "-tvf" };
    let text = run(Command::new("tar").env("TZ", "UTC").args(["--numeric-owner", "--full-time", flags]).arg(tar));
    let mut entries = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(fields.len() == 6, "{}: unexpected tar line {line:?}", tar.display());
        assert_eq!((fields[3], fields[4]), ("1970-01-01", "00:00:00"), "{}: {line}", tar.display());
        let (uid, gid) = fields[1].split_once('/').unwrap();
        assert!(uid.parse::<u32>().is_ok() && gid.parse::<u32>().is_ok(), "{}: owner names in {line}", tar.display());
        entries.push((fields[0].to_string(), fields[1].to_string(), fields[5].trim_end_matches('/').to_string()));
    }
    let names: Vec<&String> = entries.iter().map(|e| &e.2).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "{}: entries not sorted by name", tar.display());
    assert!(!entries.is_empty(), "{}: empty", tar.display());
    entries
}

/// An image archive, unpacked and checked as an OCI image layout holding one image of one layer.
struct Image {
    _dir: tempfile::TempDir,
    config: Value,
    rootfs: PathBuf,
    /// The layer's entries: name -> (mode string, owner).
    entries: BTreeMap<String, (String, String)>,
}

impl Image {
    fn open(archive: &Path, digest: &str, name: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let layout = dir.path().join("layout");
        let rootfs = dir.path().join("rootfs");
        std::fs::create_dir_all(&layout).unwrap();
        std::fs::create_dir_all(&rootfs).unwrap();

        // The archive: sorted, time 0, owner 0:0; just the layout's files.
        for (mode, owner, entry) in listing(archive, false) {
            assert_eq!(owner, "0/0", "{entry}");
            assert!(
                ["blobs", "blobs/sha256", "index.json", "oci-layout"].contains(&entry.as_str())
                    || entry.starts_with("blobs/sha256/"),
                "unexpected {entry} ({mode})"
            );
        }
        run(Command::new("tar").arg("-xf").arg(archive).arg("-C").arg(&layout));
        assert_eq!(read_json(&layout.join("oci-layout")), serde_json::json!({"imageLayoutVersion": "1.0.0"}));
        let blobs = layout.join("blobs/sha256");
        let mut blob_count = 0;
        for blob in std::fs::read_dir(&blobs).unwrap() {
            let blob = blob.unwrap();
            let bytes = std::fs::read(blob.path()).unwrap();
            assert_eq!(sha256_hex(&bytes), blob.file_name().to_string_lossy(), "a blob's name is its SHA-256");
            blob_count += 1;
        }
        assert_eq!(blob_count, 3, "manifest, config and layer");

        let index = read_json(&layout.join("index.json"));
        let manifests = index["manifests"].as_array().unwrap();
        assert_eq!(manifests.len(), 1, "{index}");
        let desc = &manifests[0];
        assert_eq!(desc["digest"], digest, "the digest printed is the index's");
        assert_eq!(desc["mediaType"], "application/vnd.oci.image.manifest.v1+json");
        assert_eq!(desc["annotations"]["io.containerd.image.name"], name, "{index}");
        let tag = name.rsplit_once(':').unwrap().1;
        assert_eq!(desc["annotations"]["org.opencontainers.image.ref.name"], tag, "{index}");
        let blob = |d: &Value| blobs.join(d.as_str().unwrap().strip_prefix("sha256:").unwrap());

        let manifest = read_json(&blob(&desc["digest"]));
        assert_eq!(manifest["mediaType"], "application/vnd.oci.image.manifest.v1+json");
        assert_eq!(manifest["config"]["mediaType"], "application/vnd.oci.image.config.v1+json");
        let layers = manifest["layers"].as_array().unwrap();
        assert_eq!(layers.len(), 1, "{manifest}");
        assert_eq!(layers[0]["mediaType"], "application/vnd.oci.image.layer.v1.tar+gzip");
        let config = read_json(&blob(&manifest["config"]["digest"]));
        assert_eq!(config["os"], "linux");
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        };
        assert_eq!(config["architecture"], arch);
        assert_eq!(desc["platform"], serde_json::json!({"os": "linux", "architecture": arch}));
        assert_eq!(config["created"], "1970-01-01T00:00:00Z");

        let layer = blob(&layers[0]["digest"]);
        let mut uncompressed = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&layer).unwrap()).read_to_end(&mut uncompressed).unwrap();
        assert_eq!(config["rootfs"]["diff_ids"], serde_json::json!([format!("sha256:{}", sha256_hex(&uncompressed))]));

        let entries = listing(&layer, true).into_iter().map(|(mode, owner, name)| (name, (mode, owner))).collect();
        run(Command::new("tar").args(["--numeric-owner", "-xpzf"]).arg(&layer).arg("-C").arg(&rootfs));
        Self { _dir: dir, config, rootfs, entries }
    }

    fn config(&self, key: &str) -> &Value {
        &self.config["config"][key]
    }

    /// A regular file of the layer (not a symlink): its mode string.
    fn file(&self, path: &str) -> &str {
        let (mode, _) =
            self.entries.get(path.trim_start_matches('/')).unwrap_or_else(|| panic!("{path} not in the layer"));
        assert!(mode.starts_with('-'), "{path} is not a regular file: {mode}");
        mode
    }
}

/// What the Dockerfile's final stage declares, read from the Dockerfile.
#[derive(Debug, Default)]
struct FinalStage {
    copy_to: Vec<String>,
    user: Vec<String>,
    expose: Vec<String>,
    entrypoint: Vec<Value>,
    cmd: Vec<Value>,
}

fn final_stage() -> FinalStage {
    let text = std::fs::read_to_string(Path::new(ROOT).join("Dockerfile")).unwrap();
    // Instructions: comments and blank lines dropped, continuation lines joined.
    let mut instructions: Vec<String> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => pending.push_str(part),
            None => {
                pending.push_str(trimmed);
                instructions.push(std::mem::take(&mut pending));
            }
        }
    }
    let last_from = instructions.iter().rposition(|i| i.starts_with("FROM ")).expect("a FROM");
    let mut stage = FinalStage::default();
    for instruction in &instructions[last_from + 1..] {
        let (keyword, rest) = instruction.split_once(char::is_whitespace).unwrap();
        let rest = rest.trim();
        match keyword.to_ascii_uppercase().as_str() {
            "COPY" => stage.copy_to.push(rest.split_whitespace().last().unwrap().to_string()),
            "USER" => stage.user.push(rest.to_string()),
            "EXPOSE" => stage.expose.extend(rest.split_whitespace().map(|p| {
                if p.contains('/') {
                    p.to_string()
                } else {
                    format!("{p}/tcp")
                }
            })),
            "ENTRYPOINT" => stage.entrypoint.push(serde_json::from_str(rest).expect("ENTRYPOINT in JSON form")),
            "CMD" => stage.cmd.push(serde_json::from_str(rest).expect("CMD in JSON form")),
            other => panic!("the Dockerfile's final stage has {other}, which image/build.sh does not know"),
        }
    }
    stage
}

/// The absolute paths `ldd` lists for a binary: the libraries and the interpreter.
fn ldd(binary: &str) -> Vec<String> {
    let text = run(Command::new("ldd").arg(binary));
    let mut paths = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "=>", path, ..] if path.starts_with('/') => paths.push((*path).to_string()),
            [path, ..] if path.starts_with('/') => paths.push((*path).to_string()),
            [name, ..] if name.starts_with("linux-vdso") => {}
            _ => panic!("ldd {binary}: unexpected line {line:?}"),
        }
    }
    paths
}

#[test]
fn extender_image_is_reproducible_says_what_the_dockerfile_says_and_runs() {
    let test = "extender_image_is_reproducible_says_what_the_dockerfile_says_and_runs";
    if !go_or_skip(test) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("a/extender.tar"), out.path().join("b/extender.tar"));
    for archive in [&a, &b] {
        std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    }
    let name = "registry.example.com/predicate-extender:0.1.0";
    let first = build(&["extender", BIN, name, a.to_str().unwrap()]);
    let second = build(&["extender", BIN, name, b.to_str().unwrap()]);
    assert_eq!(first, second, "two builds from one binary, two digests");
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "two builds, two archives");
    let image = Image::open(&a, &first, name);

    let stage = final_stage();
    assert_eq!(stage.user.len(), 1, "{stage:?}");
    assert_eq!(stage.entrypoint.len(), 1, "{stage:?}");
    assert_eq!(stage.cmd.len(), 1, "{stage:?}");
    assert_eq!(stage.copy_to.len(), 1, "{stage:?}");
    assert!(!stage.expose.is_empty(), "{stage:?}");
    assert_eq!(image.config("User"), stage.user[0].as_str());
    assert_eq!(image.config("Entrypoint"), &stage.entrypoint[0]);
    assert_eq!(image.config("Cmd"), &stage.cmd[0]);
    let mut exposed: Vec<&String> = image.config("ExposedPorts").as_object().unwrap().keys().collect();
    exposed.sort();
    let mut declared: Vec<&String> = stage.expose.iter().collect();
    declared.sort();
    assert_eq!(exposed, declared);
    // What the Dockerfile inherits from distroless's nonroot image.
    assert_eq!(image.config("WorkingDir"), "/home/nonroot");
    assert_eq!(
        image.config("Env"),
        &serde_json::json!(["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    );

    // The binary where the Dockerfile copies it, 0755, byte for byte.
    let binary = &stage.copy_to[0];
    assert_eq!(image.config("Entrypoint")[0], binary.as_str());
    assert_eq!(image.file(binary), "-rwxr-xr-x");
    let in_image = image.rootfs.join(binary.trim_start_matches('/'));
    assert!(std::fs::read(&in_image).unwrap() == std::fs::read(BIN).unwrap(), "{binary} is not the binary");

    // Every library ldd lists (and the interpreter), at its path, with the host's content.
    let libraries = ldd(BIN);
    assert!(libraries.iter().any(|l| l.contains("libc.so")), "ldd lists no libc: {libraries:?}");
    for lib in &libraries {
        image.file(lib);
        let content = std::fs::read(image.rootfs.join(lib.trim_start_matches('/'))).unwrap();
        assert!(content == std::fs::read(lib).unwrap(), "{lib} differs from the host's");
    }
    // Nothing else but the users, /tmp and the directories.
    let files: Vec<&String> =
        image.entries.iter().filter(|(_, (mode, _))| !mode.starts_with('d')).map(|(n, _)| n).collect();
    assert_eq!(files.len(), libraries.len() + 3, "{files:?}");

    let passwd = std::fs::read_to_string(image.rootfs.join("etc/passwd")).unwrap();
    assert!(passwd.lines().any(|l| l == "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin"), "{passwd}");
    assert!(passwd.lines().any(|l| l.starts_with("root:x:0:0:")), "{passwd}");
    let group = std::fs::read_to_string(image.rootfs.join("etc/group")).unwrap();
    assert!(group.lines().any(|l| l == "nonroot:x:65532:"), "{group}");
    assert_eq!(image.entries["tmp"], ("drwxrwxrwt".to_string(), "0/0".to_string()));
    assert_eq!(image.entries["home/nonroot"], ("drwx------".to_string(), "65532/65532".to_string()));

    if !is_root() {
        return skip_part(test, "serving from the image's root filesystem needs root (chroot, a mount namespace)");
    }
    serve_from(&image.rootfs);
}

/// `serve --demo` from the root filesystem, bind-mounted read-only in a mount namespace of its own
/// (gone with the process), as 65532:65532: it answers a /filter, runs as 65532, and exits 0 on
/// SIGTERM.
fn serve_from(rootfs: &Path) {
    let script =
        r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec chroot --userspec=65532:65532 "$0" "$@""#;
    let mut unshare = Command::new("unshare")
        // --kill-child: the server dies with unshare (which the guard below kills on a failure).
        .args(["--mount", "--propagation", "private", "--fork", "--kill-child", "sh", "-c", script])
        .arg(rootfs)
        .args(["/usr/local/bin/predicate-extender", "serve", "--demo", "--listen", "127.0.0.1:0"])
        .args(["--admin-listen", "127.0.0.1:0", "--log-format", "json"])
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare");
    let unshare_pid = unshare.id();
    let lines = lines_of(unshare.stderr.take().unwrap());
    let mut unshare = KilledOnDrop(Some(unshare));
    let deadline = Instant::now() + Duration::from_secs(30);
    let verbs = loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(wait).expect("a 'listening' log line within 30 s (did the chroot fail?)");
        let Ok(v) = serde_json::from_str::<Value>(&line) else { panic!("not JSON: {line}") };
        if v["fields"]["message"] == "listening" {
            break v["fields"]["verbs"].as_str().unwrap().to_string();
        }
    };
    // unshare --fork's one child is the server (sh and chroot exec'd into it).
    let children = std::fs::read_to_string(format!("/proc/{unshare_pid}/task/{unshare_pid}/children")).unwrap();
    let server: u32 = children.trim().parse().unwrap_or_else(|_| panic!("children of unshare: {children:?}"));
    let stop = KillOnDrop(server);
    let status = std::fs::read_to_string(format!("/proc/{server}/status")).unwrap();
    let ids =
        |key: &str| status.lines().find(|l| l.starts_with(key)).unwrap().split_whitespace().skip(1).collect::<Vec<_>>();
    assert_eq!(ids("Uid:"), ["65532"; 4], "{status}");
    assert_eq!(ids("Gid:"), ["65532"; 4], "{status}");
    let mountinfo = std::fs::read_to_string(format!("/proc/{server}/mountinfo")).unwrap();
    let root = mountinfo.lines().find(|l| l.split_whitespace().nth(4) == Some("/")).unwrap();
    assert!(root.split_whitespace().nth(5).unwrap().split(',').any(|o| o == "ro"), "root not read-only: {root}");

    let body = std::fs::read(Path::new(ROOT).join("examples/demo/filter-web-2.json")).unwrap();
    let answer = child::blocking_post(&verbs, "/filter", &body);
    assert!(answer.contains(r#""NodeNames":["node-b1","node-b3"]"#), "{answer}");

    assert!(Command::new("kill").args(["-TERM", &server.to_string()]).status().unwrap().success());
    let status = unshare.0.take().unwrap().wait().unwrap();
    std::mem::forget(stop); // exited: its pid is no longer ours to signal
    assert_eq!(status.code(), Some(0), "exit code after SIGTERM");
}

/// A child process killed (and reaped) if the test fails before it is waited for.
struct KilledOnDrop(Option<std::process::Child>);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The lines of a child's output, read on a thread, so that a wait for one can time out.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Kills the server if the test fails before stopping it (a no-op once it has exited).
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", &self.0.to_string()]).stderr(Stdio::null()).status();
    }
}

/// The pause image: /pause alone, static, user 65535; from its root filesystem it says its version
/// and exits 0 on SIGTERM. Its program then stands in for a static kube-scheduler: that image takes
/// it, and refuses the (dynamically linked) extender.
#[test]
fn pause_and_kube_scheduler_images() {
    let test = "pause_and_kube_scheduler_images";
    if !go_or_skip(test) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let archive = out.path().join("pause.tar");
    let name = "registry.k8s.io/pause:3.10";
    let digest = build(&["pause", name, archive.to_str().unwrap()]);
    let pause = Image::open(&archive, &digest, name);
    assert_eq!(pause.config("User"), "65535:65535");
    assert_eq!(pause.config("Entrypoint"), &serde_json::json!(["/pause"]));
    assert_eq!(pause.entries.len(), 1, "{:?}", pause.entries);
    assert_eq!(pause.file("/pause"), "-rwxr-xr-x");
    let program = pause.rootfs.join("pause");
    let elf = std::fs::read(&program).unwrap();
    assert!(elf.starts_with(b"\x7fELF"), "not an ELF file");
    let ldd = Command::new("ldd").arg(&program).output().unwrap();
    assert!(!ldd.status.success(), "/pause is dynamically linked: {}", String::from_utf8_lossy(&ldd.stdout));

    if is_root() {
        let chroot = |args: &[&str]| {
            let mut c = Command::new("chroot");
            c.arg("--userspec=65535:65535").arg(&pause.rootfs).arg("/pause").args(args);
            c
        };
        assert!(run(&mut chroot(&["-v"])).contains("pause"));
        let mut child = chroot(&[]).stderr(Stdio::piped()).spawn().unwrap();
        // The warning (not PID 1 here) comes once the signal handlers are in.
        // Its standard error stays open until it has exited (it writes there on SIGTERM).
        let stderr = lines_of(child.stderr.take().unwrap());
        let pid = child.id();
        let mut child = KilledOnDrop(Some(child));
        let warning = stderr.recv_timeout(Duration::from_secs(30)).expect("pause's first line within 30 s");
        assert!(warning.contains("first process"), "{warning}");
        std::thread::sleep(Duration::from_millis(200));
        assert!(child.0.as_mut().unwrap().try_wait().unwrap().is_none(), "pause exited by itself");
        assert!(Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap().success());
        assert_eq!(child.0.take().unwrap().wait().unwrap().code(), Some(0), "exit code after SIGTERM");
        let shutdown: String = stderr.iter().collect::<Vec<_>>().join("\n");
        assert!(shutdown.contains("Shutting down"), "{shutdown}");
    } else {
        skip_part(test, "running /pause from the image's root filesystem needs root");
    }

    // kube-scheduler: a static binary (the pause program as the stand-in) at its path, run as root
    // as upstream's image is, with distroless's users.
    let archive = out.path().join("kube-scheduler.tar");
    let name = "registry.k8s.io/kube-scheduler:v1.37.2";
    let digest = build(&["kube-scheduler", program.to_str().unwrap(), name, archive.to_str().unwrap()]);
    let scheduler = Image::open(&archive, &digest, name);
    assert_eq!(scheduler.config("Entrypoint"), &serde_json::json!(["/usr/local/bin/kube-scheduler"]));
    assert_eq!(scheduler.config("User"), &Value::Null);
    assert_eq!(scheduler.file("/usr/local/bin/kube-scheduler"), "-rwxr-xr-x");
    let passwd = std::fs::read_to_string(scheduler.rootfs.join("etc/passwd")).unwrap();
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");

    // Refusals name what is wrong.
    let refused = |args: &[&str], says: &str| {
        let out = build_script(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "image/build.sh {args:?} succeeded");
        assert!(stderr.contains(says), "image/build.sh {args:?}: {stderr}");
    };
    let target = out.path().join("refused.tar");
    let target = target.to_str().unwrap();
    refused(&["kube-scheduler", BIN, name, target], "dynamically linked");
    refused(
        &["kube-scheduler", "/nonexistent/kube-scheduler", name, target],
        "/nonexistent/kube-scheduler does not exist",
    );
    refused(&["pause", "registry.k8s.io/pause", target], "NAME:TAG");
    refused(&["extender", BIN], "usage:");
    assert!(!Path::new(target).exists(), "a refused build left {target}");
}
