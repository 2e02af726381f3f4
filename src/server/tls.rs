//! TLS for the verbs listener: the serving certificate, its key and an optional client CA, read
//! from files (`--tls-cert-file`, `--tls-private-key-file`, `--client-ca-file`) and reloaded when
//! their contents change (polled, see [`crate::server::reload`]). A new pair that does not load
//! (unparsable, or a key that does not match the certificate) is logged and the previous
//! configuration keeps serving.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::server::reload::{LastSeen, Reloadable};

pub const CERT_FLAG: &str = "--tls-cert-file";
pub const KEY_FLAG: &str = "--tls-private-key-file";
pub const CLIENT_CA_FLAG: &str = "--client-ca-file";

/// The files of the verbs listener's TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM: the serving certificate, then any intermediates.
    pub cert: PathBuf,
    /// PEM: its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM: the CAs a client certificate must chain to; `None` asks for no client certificate.
    pub client_ca: Option<PathBuf>,
}

/// Why the TLS files cannot be used, naming the flag and the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    #[error("{flag} {}: cannot read: {reason}", path.display())]
    Read { flag: &'static str, path: PathBuf, reason: String },
    #[error("{flag} {}: {reason}", path.display())]
    Invalid { flag: &'static str, path: PathBuf, reason: String },
    #[error("{CERT_FLAG} {} and {KEY_FLAG} {}: {reason}", cert.display(), key.display())]
    Pair { cert: PathBuf, key: PathBuf, reason: String },
}

/// The files' bytes, to notice a change.
#[derive(Debug, PartialEq, Eq)]
pub struct Contents {
    cert: Vec<u8>,
    key: Vec<u8>,
    client_ca: Option<Vec<u8>>,
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| TlsError::Read { flag, path: path.to_path_buf(), reason: e.to_string() })
}

fn certificates(flag: &'static str, path: &Path, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let invalid = |reason: String| TlsError::Invalid { flag, path: path.to_path_buf(), reason };
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("not valid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(invalid("no CERTIFICATE block in the file".to_string()));
    }
    Ok(certs)
}

impl TlsFiles {
    fn read(&self) -> Result<Contents, TlsError> {
        Ok(Contents {
            cert: read(CERT_FLAG, &self.cert)?,
            key: read(KEY_FLAG, &self.key)?,
            client_ca: self.client_ca.as_deref().map(|p| read(CLIENT_CA_FLAG, p)).transpose()?,
        })
    }

    /// The server configuration from the files' contents.
    fn build(&self, contents: &Contents) -> Result<ServerConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let certs = certificates(CERT_FLAG, &self.cert, &contents.cert)?;
        let invalid_key = |reason: String| TlsError::Invalid { flag: KEY_FLAG, path: self.key.clone(), reason };
        let key = PrivateKeyDer::from_pem_slice(&contents.key).map_err(|e| match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                invalid_key("no PRIVATE KEY block (PKCS#8, PKCS#1 or SEC1) in the file".to_string())
            }
            e => invalid_key(format!("not valid PEM: {e}")),
        })?;
        provider.key_provider.load_private_key(key.clone_key()).map_err(|e| invalid_key(e.to_string()))?;

        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| self.pair_error(e))?;
        let builder = match (&self.client_ca, &contents.client_ca) {
            (Some(path), Some(pem)) => builder.with_client_cert_verifier(client_verifier(path, pem, &provider)?),
            _ => builder.with_no_client_auth(),
        };
        let mut config = builder.with_single_cert(certs, key).map_err(|e| self.pair_error(e))?;
        // Only HTTP/1.1 is served; saying so lets a client that offers h2 fall back cleanly.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    fn pair_error(&self, e: rustls::Error) -> TlsError {
        let reason = match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                "the private key does not belong to the certificate".to_string()
            }
            e => e.to_string(),
        };
        TlsError::Pair { cert: self.cert.clone(), key: self.key.clone(), reason }
    }
}

fn client_verifier(
    path: &Path,
    pem: &[u8],
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TlsError> {
    let invalid = |reason: String| TlsError::Invalid { flag: CLIENT_CA_FLAG, path: path.to_path_buf(), reason };
    let mut roots = RootCertStore::empty();
    for cert in certificates(CLIENT_CA_FLAG, path, pem)? {
        roots.add(cert).map_err(|e| invalid(format!("not a usable CA certificate: {e}")))?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| invalid(e.to_string()))
}

/// The verbs listener's TLS configuration, swapped when the files change.
pub struct ReloadingTls {
    files: TlsFiles,
    current: ArcSwap<ServerConfig>,
    seen: LastSeen<Contents, TlsError>,
}

impl ReloadingTls {
    /// Reads and checks the files: at startup, any problem is an error.
    pub fn load(files: TlsFiles) -> Result<Self, TlsError> {
        let contents = files.read()?;
        let config = files.build(&contents)?;
        Ok(ReloadingTls { files, current: ArcSwap::from_pointee(config), seen: LastSeen::new(contents) })
    }

    /// An acceptor with the configuration now in force.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.current.load_full())
    }
}

impl Reloadable for ReloadingTls {
    type Contents = Contents;
    type Error = TlsError;
    const WHAT: &'static str = "the TLS certificate";

    fn read(&self) -> Result<Contents, TlsError> {
        self.files.read()
    }

    fn apply(&self, contents: &Contents) -> Result<(), TlsError> {
        self.current.store(Arc::new(self.files.build(contents)?));
        Ok(())
    }

    fn last_seen(&self) -> &LastSeen<Contents, TlsError> {
        &self.seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::reload::Reload;

    fn pair(name: &str) -> (String, String) {
        let c = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
        (c.cert.pem(), c.signing_key.serialize_pem())
    }

    #[test]
    fn a_change_is_loaded_and_a_broken_one_is_reported_once_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles { cert: dir.path().join("tls.crt"), key: dir.path().join("tls.key"), client_ca: None };
        let write = |(cert, key): &(String, String)| {
            std::fs::write(&files.cert, cert).unwrap();
            std::fs::write(&files.key, key).unwrap();
        };
        let (a, b) = (pair("a.example"), pair("b.example"));
        write(&a);
        let tls = ReloadingTls::load(files.clone()).unwrap();
        assert_eq!(tls.check(), Reload::Unchanged);

        write(&b);
        assert_eq!(tls.check(), Reload::Reloaded);
        let serving = tls.current.load_full();
        assert_eq!(tls.check(), Reload::Unchanged);

        write(&(a.0.clone(), b.1.clone()));
        match tls.check() {
            Reload::Failed(TlsError::Pair { reason, .. }) => {
                assert_eq!(reason, "the private key does not belong to the certificate")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(tls.check(), Reload::Unchanged, "reported once");
        assert!(Arc::ptr_eq(&serving, &tls.current.load_full()), "the last good configuration serves on");

        std::fs::remove_file(&files.key).unwrap();
        match tls.check() {
            Reload::Failed(TlsError::Read { flag, .. }) => assert_eq!(flag, KEY_FLAG),
            other => panic!("{other:?}"),
        }
        assert!(Arc::ptr_eq(&serving, &tls.current.load_full()));
        write(&a);
        assert_eq!(tls.check(), Reload::Reloaded);
    }
}
