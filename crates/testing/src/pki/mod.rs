//! Certificates for the TLS tests, made on the spot with rcgen: CAs, server and client
//! certificates, a Kubernetes-style Secret volume to rotate them in, and HTTPS clients.
#![allow(dead_code)] // each test binary uses a different part of this

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A self-signed CA.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pub pem: String,
}

/// A certificate and its key, as PEM, and the certificate's DER to recognise it on the wire.
#[derive(Clone)]
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
    pub der: Vec<u8>,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::default();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = issuer.pem();
        Ca { issuer, pem }
    }

    /// A serving certificate for 127.0.0.1 and localhost.
    pub fn server(&self, name: &str) -> Leaf {
        self.server_for(name, &[])
    }

    /// A serving certificate for 127.0.0.1, localhost and `more` (addresses or DNS names).
    pub fn server_for(&self, name: &str, more: &[&str]) -> Leaf {
        let mut sans: Vec<String> = vec!["127.0.0.1".into(), "localhost".into()];
        sans.extend(more.iter().map(|s| s.to_string()));
        self.leaf(name, sans, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate, as kube-scheduler's tlsConfig.certFile would hold.
    pub fn client(&self, name: &str) -> Leaf {
        self.leaf(name, vec![], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn leaf(&self, name: &str, sans: Vec<String>, usage: ExtendedKeyUsagePurpose) -> Leaf {
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf { cert_pem: cert.pem(), key_pem: key.serialize_pem(), der: cert.der().to_vec() }
    }
}

/// A directory laid out as kubelet lays out a Secret volume: `tls.crt` is a symlink to
/// `..data/tls.crt`, and `..data` a symlink to a timestamped directory, swapped by a rename.
pub struct SecretVolume {
    dir: tempfile::TempDir,
    generation: usize,
}

impl SecretVolume {
    pub fn new(files: &[(&str, &str)]) -> SecretVolume {
        let mut volume = SecretVolume { dir: tempfile::tempdir().unwrap(), generation: 0 };
        volume.update(files);
        for (name, _) in files {
            std::os::unix::fs::symlink(Path::new("..data").join(name), volume.path(name)).unwrap();
        }
        volume
    }

    /// Replaces every file at once, as kubelet does when the Secret changes.
    pub fn update(&mut self, files: &[(&str, &str)]) {
        self.generation += 1;
        let data = format!("..gen_{}", self.generation);
        std::fs::create_dir(self.dir.path().join(&data)).unwrap();
        for (name, text) in files {
            std::fs::write(self.dir.path().join(&data).join(name), text).unwrap();
        }
        let tmp = self.dir.path().join("..data_tmp");
        std::os::unix::fs::symlink(&data, &tmp).unwrap();
        std::fs::rename(&tmp, self.dir.path().join("..data")).unwrap();
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }
}

/// A client TLS configuration trusting `roots` (PEM), presenting `identity` if given.
pub fn client_config(roots: &[&str], identity: Option<&Leaf>) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut store = rustls::RootCertStore::empty();
    for pem in roots {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            store.add(cert.unwrap()).unwrap();
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store);
    let config = match identity {
        Some(leaf) => {
            let certs =
                CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes()).collect::<Result<Vec<_>, _>>().unwrap();
            let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
            builder.with_client_auth_cert(certs, key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// What an HTTPS POST got back: the status, the body and the certificate the server presented.
#[derive(Debug)]
pub struct HttpsAnswer {
    pub status: u16,
    pub body: String,
    pub server_cert: Vec<u8>,
}

/// POSTs `body` to `https://{addr}{path}` on a new connection (HTTP/1.1, `Connection: close`,
/// 127.0.0.1 as the server name). Any handshake or connection failure is `Err`. (reqwest's TLS
/// would bring aws-lc or, without a provider, break every plain `reqwest::Client::new()`.)
pub async fn https_post(
    config: Arc<rustls::ClientConfig>,
    addr: &str,
    path: &str,
    body: &[u8],
) -> std::io::Result<HttpsAnswer> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(config).connect(name, tcp).await?;
    let server_cert =
        tls.get_ref().1.peer_certificates().and_then(|c| c.first()).map(|c| c.to_vec()).unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await?;
    tls.write_all(body).await?;
    tls.flush().await?;
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer).await?;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) =
        text.split_once("\r\n\r\n").ok_or_else(|| std::io::Error::other(format!("no HTTP answer: {text:?}")))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status: {head:?}")))?;
    Ok(HttpsAnswer { status, body: body.to_string(), server_cert })
}
