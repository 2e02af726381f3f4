//! HTTPS on the verbs listener: `/filter` over TLS, client certificates required with
//! `--client-ca-file`, certificates rotated without a restart (and a broken rotation ignored), and
//! unusable files refused at startup with the flag and the file named.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod child;
mod common;
use predicate_extender_testing::pki;

use std::sync::Arc;

use common::config;
use pki::{client_config, https_post, Ca, Leaf, SecretVolume};
use predicate_extender::server::{start, ClusterSource, TlsFiles};
use predicate_extender_testing::eventually;

fn demo_filter_body() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo/filter-web-2.json")).unwrap()
}

fn secret(server: &Leaf, client_ca: Option<&Ca>) -> SecretVolume {
    let mut files = vec![("tls.crt", server.cert_pem.as_str()), ("tls.key", server.key_pem.as_str())];
    if let Some(ca) = client_ca {
        files.push(("ca.crt", ca.pem.as_str()));
    }
    SecretVolume::new(&files)
}

fn tls_files(volume: &SecretVolume, client_ca: bool) -> TlsFiles {
    TlsFiles {
        cert: volume.path("tls.crt"),
        key: volume.path("tls.key"),
        client_ca: client_ca.then(|| volume.path("ca.crt")),
    }
}

/// POSTs the demo /filter over HTTPS on a new connection; the answer's body and the server's certificate.
async fn filter(client: &Arc<rustls::ClientConfig>, addr: &str) -> std::io::Result<(String, Vec<u8>)> {
    let answer = https_post(Arc::clone(client), addr, "/filter", &demo_filter_body()).await?;
    assert_eq!(answer.status, 200, "{answer:?}");
    Ok((answer.body, answer.server_cert))
}

const FEASIBLE: &str = r#""NodeNames":["node-b1","node-b3"]"#;

#[tokio::test]
async fn filter_answers_over_https_and_the_admin_listener_stays_plain() {
    let ca = Ca::new("test CA");
    let leaf = ca.server("extender");
    let volume = secret(&leaf, None);
    let mut c = config(ClusterSource::Demo);
    c.tls = Some(tls_files(&volume, false));
    let server = start(c).await.unwrap();
    let addr = server.verbs_addr.to_string();

    let (answer, cert) = filter(&client_config(&[&ca.pem], None), &addr).await.unwrap();
    assert!(answer.contains(FEASIBLE), "{answer}");
    assert_eq!(cert, leaf.der, "the configured certificate");

    // A client that does not trust the CA refuses the server; plain HTTP gets no answer.
    let stranger = Ca::new("another CA");
    let untrusted = filter(&client_config(&[&stranger.pem], None), &addr).await;
    assert!(format!("{untrusted:?}").contains("UnknownIssuer"), "{untrusted:?}");
    let plain = reqwest::Client::new();
    assert!(plain.post(format!("http://{addr}/filter")).body(demo_filter_body()).send().await.is_err());

    let health = plain.get(format!("http://{}/healthz", server.admin_addr)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_ca_requires_a_client_certificate_it_signed() {
    let server_ca = Ca::new("serving CA");
    let client_ca = Ca::new("client CA");
    let volume = secret(&server_ca.server("extender"), Some(&client_ca));
    let mut c = config(ClusterSource::Demo);
    c.tls = Some(tls_files(&volume, true));
    let server = start(c).await.unwrap();
    let addr = server.verbs_addr.to_string();

    let scheduler = client_ca.client("kube-scheduler");
    let (answer, _) = filter(&client_config(&[&server_ca.pem], Some(&scheduler)), &addr).await.unwrap();
    assert!(answer.contains(FEASIBLE), "{answer}");

    let none = filter(&client_config(&[&server_ca.pem], None), &addr).await;
    assert!(format!("{none:?}").contains("CertificateRequired"), "no client certificate: {none:?}");
    let wrong_ca = server_ca.client("not-signed-by-the-client-ca");
    let wrong = filter(&client_config(&[&server_ca.pem], Some(&wrong_ca)), &addr).await;
    assert!(format!("{wrong:?}").contains("UnknownCA"), "a client certificate from another CA: {wrong:?}");
    server.shutdown().await.unwrap();
}

/// Polls fresh connections until the server presents `want`, or panics after the deadline.
async fn until_serving(client: &Arc<rustls::ClientConfig>, addr: &str, want: &[u8], what: &str) {
    eventually(what, child::DEADLINE, || async { filter(client, addr).await.is_ok_and(|(_, cert)| cert == want) })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_rotate_without_a_restart_and_a_broken_rotation_keeps_the_last_good_one() {
    let first_ca = Ca::new("first CA");
    let second_ca = Ca::new("second CA");
    let clients_ca = Ca::new("client CA");
    let first = first_ca.server("first");
    let mut volume = secret(&first, Some(&clients_ca));
    let args = [
        "--demo".to_string(),
        "--tls-cert-file".into(),
        volume.arg("tls.crt"),
        "--tls-private-key-file".into(),
        volume.arg("tls.key"),
        "--client-ca-file".into(),
        volume.arg("ca.crt"),
    ];
    let mut server =
        tokio::task::block_in_place(|| child::Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    let addr = server.verbs.clone();
    let identity = clients_ca.client("kube-scheduler");
    let client = client_config(&[&first_ca.pem, &second_ca.pem], Some(&identity));
    let (_, cert) = filter(&client, &addr).await.unwrap();
    assert_eq!(cert, first.der);

    // cert-manager renews: a new certificate from another CA, swapped in as kubelet does.
    let second = second_ca.server("second");
    volume.update(&[("tls.crt", &second.cert_pem), ("tls.key", &second.key_pem), ("ca.crt", &clients_ca.pem)]);
    until_serving(&client, &addr, &second.der, "the rotated certificate").await;

    // A broken rotation: the certificate does not go with the key. Logged, and the last good pair serves on.
    let mark = server.mark();
    let third = first_ca.server("third");
    volume.update(&[("tls.crt", &third.cert_pem), ("tls.key", &second.key_pem), ("ca.crt", &clients_ca.pem)]);
    let error = tokio::task::block_in_place(|| {
        server.wait_log_since(mark, "the failed reload", |l| {
            child::message(l).contains("cannot reload the TLS certificate")
        })
    });
    let text = error["fields"]["error"].as_str().unwrap_or_default();
    assert!(text.contains("the private key does not belong to the certificate"), "{error}");
    assert!(text.contains("--tls-cert-file") && text.contains("tls.crt"), "{error}");
    let (answer, cert) = filter(&client, &addr).await.unwrap();
    assert_eq!(cert, second.der, "still the last good certificate");
    assert!(answer.contains(FEASIBLE), "{answer}");

    // Fixed again: picked up.
    volume.update(&[("tls.crt", &third.cert_pem), ("tls.key", &third.key_pem), ("ca.crt", &clients_ca.pem)]);
    until_serving(&client, &addr, &third.der, "the repaired certificate").await;

    server.sigterm();
    let status = tokio::task::block_in_place(|| server.wait_exit(child::DEADLINE));
    assert_eq!(status.code(), Some(0));
}

#[test]
fn unusable_tls_files_stop_startup_naming_the_flag_and_the_file() {
    let ca = Ca::new("test CA");
    let leaf = ca.server("extender");
    let other = ca.server("other");
    let volume = SecretVolume::new(&[
        ("tls.crt", &leaf.cert_pem),
        ("tls.key", &leaf.key_pem),
        ("other.key", &other.key_pem),
        ("ca.crt", &ca.pem),
        ("garbage", "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n"),
    ]);
    let (crt, key, garbage) = (volume.arg("tls.crt"), volume.arg("tls.key"), volume.arg("garbage"));
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--tls-cert-file".into(), "/nonexistent/tls.crt".into(), "--tls-private-key-file".into(), key.clone()],
            "--tls-cert-file /nonexistent/tls.crt: cannot read".into(),
        ),
        (
            vec!["--tls-cert-file".into(), key.clone(), "--tls-private-key-file".into(), key.clone()],
            format!("--tls-cert-file {key}: no CERTIFICATE block in the file"),
        ),
        (
            vec!["--tls-cert-file".into(), crt.clone(), "--tls-private-key-file".into(), crt.clone()],
            format!("--tls-private-key-file {crt}: no PRIVATE KEY block"),
        ),
        (
            vec!["--tls-cert-file".into(), crt.clone(), "--tls-private-key-file".into(), volume.arg("other.key")],
            format!(
                "--tls-cert-file {crt} and --tls-private-key-file {}: the private key does not belong to the certificate",
                volume.arg("other.key")
            ),
        ),
        (
            vec![
                "--tls-cert-file".into(),
                crt.clone(),
                "--tls-private-key-file".into(),
                key.clone(),
                "--client-ca-file".into(),
                garbage.clone(),
            ],
            format!("--client-ca-file {garbage}: not valid PEM"),
        ),
    ];
    for (args, want) in cases {
        let out = std::process::Command::new(child::BIN)
            .args(["serve", "--demo", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: want {want:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
