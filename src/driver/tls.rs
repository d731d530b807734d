//! The TLS side of a target, which dbload does itself because tokio-postgres
//! knows only three of libpq's five ssl modes and no `sslrootcert`.
//!
//! Each way of checking the server gets its own rustls client: rustls's own
//! verifier for `verify-full`, and for the checks it does not offer (none at
//! all, or the chain without the host name) a verifier written here. A
//! rejected certificate becomes advice on what to change.

use std::sync::Arc;

use anyhow::Context as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};

use super::pg::conninfo::Param;
use super::SslMode;
use crate::error::usage;
use crate::file_cap::{self, Cap};

/// `sslrootcert`, read under the configuration cap.
const CA_FILE: Cap = Cap::config("the CA certificate file");

/// What the TLS client checks about the server's certificate.
#[derive(Clone, Copy)]
pub(super) enum Verification {
    None,
    Chain,
    ChainAndName,
}

/// Builds the rustls client of a PostgreSQL target for one ssl mode, for
/// both of its connections: tokio-postgres's and dbload's own.
pub(super) fn pg_client_config(
    verification: Verification,
    ssl_mode: SslMode,
    root_cert: Option<&Param>,
) -> anyhow::Result<Arc<ClientConfig>> {
    Ok(Arc::new(client_config(verification, || root_store(ssl_mode, root_cert))?))
}

/// The rustls client for one way of checking the server, for every kind of
/// target; `roots` is only called when the chain is checked. The crypto
/// provider is given explicitly: relying on a process-wide default would
/// panic if none or two were installed.
pub(super) fn client_config(
    verification: Verification,
    roots: impl FnOnce() -> anyhow::Result<RootCertStore>,
) -> anyhow::Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("the ring crypto provider does not support TLS 1.2 or 1.3")?;
    Ok(match verification {
        Verification::ChainAndName => builder.with_root_certificates(roots()?).with_no_client_auth(),
        Verification::Chain => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier { roots: Some(roots()?), provider }))
            .with_no_client_auth(),
        Verification::None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier { roots: None, provider }))
            .with_no_client_auth(),
    })
}

/// The system's trusted CAs; `None` when it has none.
pub(super) fn system_roots() -> Option<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let (added, _unparsable) = roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    (added > 0).then_some(roots)
}

/// The CA certificates from `sslrootcert`, or the system's when none is given.
fn root_store(ssl_mode: SslMode, root_cert: Option<&Param>) -> anyhow::Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let Some(param) = root_cert else {
        return system_roots().ok_or_else(|| {
            usage(format!(
                "sslmode={ssl_mode} checks the server's certificate against trusted CAs, but \
                 this system has none: give the CA with sslrootcert=FILE (or PGSSLROOTCERT), or \
                 install the ca-certificates package"
            ))
        });
    };
    let path = &param.value;
    let unusable = |why: String| {
        usage(format!(
            "{}: sslrootcert `{path}` {why}: give the PEM file of the CA that signed the \
             server's certificate",
            param.source
        ))
    };
    let pem = match file_cap::bytes_of(std::path::Path::new(path), CA_FILE) {
        Ok(pem) => pem,
        Err(file_cap::Failure::Io(err)) => return Err(unusable(format!("cannot be read ({err})"))),
        Err(f) => return Err(CA_FILE.refuse(&format!("{}: sslrootcert `{path}`", param.source), f)),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|err| unusable(format!("cannot be read as PEM ({err})")))?;
    if certs.is_empty() {
        return Err(unusable("holds no certificate (no -----BEGIN CERTIFICATE----- block)".into()));
    }
    for cert in certs {
        roots.add(cert).map_err(|err| unusable(format!("holds a certificate rustls cannot use ({err})")))?;
    }
    Ok(roots)
}

/// libpq's checks that rustls's own verifier does not offer: no check at all
/// (`prefer`, `require`, and `dbload http --insecure`: encrypted, but the
/// server is not authenticated), or
/// the chain without the host name (`verify-ca`). Handshake signatures are
/// verified in both cases, so the session is at least bound to whoever
/// holds the certificate's key.
#[derive(Debug)]
struct LibpqVerifier {
    /// `None`: accept any certificate.
    roots: Option<RootCertStore>,
    provider: Arc<CryptoProvider>,
}

impl LibpqVerifier {
    /// Without roots (nothing is authenticated), a certificate that webpki
    /// cannot parse at all is accepted as libpq accepts it: Citus makes an
    /// X.509 version 1 certificate for every node, which `prefer` and
    /// `require` must not refuse. A signature that does not match a key
    /// that can be read still fails.
    fn unparsable_accepted(
        &self,
        checked: Result<HandshakeSignatureValid, rustls::Error>,
        cert: &CertificateDer<'_>,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match checked {
            Err(_) if self.roots.is_none() && ParsedCertificate::try_from(cert).is_err() => {
                Ok(HandshakeSignatureValid::assertion())
            }
            checked => checked,
        }
    }
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            rustls::client::verify_server_cert_signed_by_trust_anchor(
                &ParsedCertificate::try_from(end_entity)?,
                roots,
                intermediates,
                now,
                self.provider.signature_verification_algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let checked = rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        );
        self.unparsable_accepted(checked, cert)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let checked = rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        );
        self.unparsable_accepted(checked, cert)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// Whether `err` says the server presented a CA certificate as its own
/// (webpki's `CaUsedAsEndEntity`, which rustls passes on only as an
/// `Other` error, by name): typically a self-signed CA put on the server.
pub(super) fn ca_as_server_certificate(err: &CertificateError) -> bool {
    matches!(err, CertificateError::Other(other) if other.0.to_string() == "CaUsedAsEndEntity")
}

/// Whether `err` is about the certificate's validity period.
pub(super) fn out_of_validity(err: &CertificateError) -> bool {
    matches!(
        err,
        CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. }
    )
}

/// What to change when the server's certificate was rejected, for the
/// connect error that reports it.
pub(super) fn certificate_advice(err: &CertificateError) -> String {
    match err {
        err if ca_as_server_certificate(err) => {
            "the server presents a CA certificate as its own (a self-signed CA?): give the server a \
             certificate that CA issued, or use sslmode=require to encrypt without verifying the server"
        }
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            "the server's certificate is not signed by a trusted CA: give that CA with \
             sslrootcert=FILE (or PGSSLROOTCERT), or use sslmode=require to encrypt without \
             verifying the server"
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "the server's certificate is not issued for this host name: connect with a name \
             the certificate lists, or use sslmode=verify-ca to check only the CA"
        }
        err if out_of_validity(err) => {
            "the server's certificate is outside its validity period: renew it, or check this \
             machine's clock"
        }
        _ => {
            "the server's certificate was rejected: check it and sslrootcert, or use \
             sslmode=require to encrypt without verifying the server"
        }
    }
    .to_owned()
}

#[cfg(test)]
pub(super) mod tests {
    use std::fs::{self, Permissions};
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};

    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};
    use tempfile::TempDir;

    use crate::driver::pg::tests::{block_on, no_env};
    use crate::driver::PgTarget;
    use crate::error::{exit, exit_code};
    use crate::throwaway::{server_account, LocalOptions, LocalPostgres};

    pub(in crate::driver) fn new_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
    }

    /// Writes a file that the local server can read: when the tests run as
    /// root, the server runs as another account, and PostgreSQL wants its
    /// key file private to the account that runs it.
    pub(in crate::driver) fn write_for_server(dir: &Path, name: &str, contents: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, contents).unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o600)).unwrap();
        if let Some(user) = server_account().unwrap() {
            nix::unistd::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
        }
        path
    }

    /// A local server with TLS on, whose certificate (signed by `ca`) names
    /// only 127.0.0.1, and whose network logins are: `postgres` trusted,
    /// `bench` by password, anyone else rejected.
    pub(in crate::driver) struct TlsServer {
        pub server: LocalPostgres,
        /// The CA's certificate file, for `sslrootcert`.
        pub ca: PathBuf,
        _files: TempDir,
    }

    impl TlsServer {
        pub fn start() -> TlsServer {
            let files = TempDir::new().unwrap();
            // The server account must be able to enter the directory.
            fs::set_permissions(files.path(), Permissions::from_mode(0o755)).unwrap();
            let ca = new_ca("dbload test CA");
            let key = KeyPair::generate().unwrap();
            let cert = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().signed_by(&key, &ca).unwrap();
            let dir = files.path();
            let cert_file = write_for_server(dir, "server.crt", &cert.pem());
            let key_file = write_for_server(dir, "server.key", &key.serialize_pem());
            let hba_file = write_for_server(
                dir,
                "pg_hba.conf",
                "local all all trust\n\
                 host all postgres 127.0.0.1/32 trust\n\
                 host all bench 127.0.0.1/32 scram-sha-256\n\
                 host all all 127.0.0.1/32 reject\n",
            );
            let ca_file = dir.join("ca.pem");
            fs::write(&ca_file, ca.pem()).unwrap();
            let setting = |name: &str, path: &Path| (name.to_owned(), path.display().to_string());
            let server = LocalPostgres::start(&LocalOptions {
                extra_settings: vec![
                    ("ssl".into(), "on".into()),
                    setting("ssl_cert_file", &cert_file),
                    setting("ssl_key_file", &key_file),
                    setting("hba_file", &hba_file),
                ],
                ..LocalOptions::default()
            })
            .unwrap();
            TlsServer { server, ca: ca_file, _files: files }
        }

        /// `user[:password]@127.0.0.1:PORT/dbname?query`
        pub fn url(&self, userinfo: &str, dbname: &str, query: &str) -> String {
            let port = self.server.url().rsplit(':').next().unwrap().to_owned();
            let port = port.split('/').next().unwrap();
            format!("postgres://{userinfo}@127.0.0.1:{port}/{dbname}?{query}")
        }
    }

    /// Connects and reports whether the session is encrypted.
    async fn connect_ssl(url: &str) -> anyhow::Result<bool> {
        let client = PgTarget::from_url(url, "--url", &no_env)?.connect().await?;
        let row = client.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[]).await?;
        Ok(row.get(0))
    }

    #[test]
    fn tls_modes_check_what_libpq_checks() {
        let tls = TlsServer::start();
        let ca = tls.ca.display().to_string();
        let other_ca_file = tls._files.path().join("other-ca.pem");
        fs::write(&other_ca_file, new_ca("some other CA").pem()).unwrap();
        let other_ca = other_ca_file.display().to_string();
        let url = |query: &str| tls.url("postgres", "postgres", query);
        // The certificate names 127.0.0.1 only; `localhost` connects to the
        // same address under a name the certificate does not list.
        let by_name = |query: &str| format!("{}&host=localhost&hostaddr=127.0.0.1", url(query));

        block_on(async {
            let verified = format!("sslmode=verify-full&sslrootcert={ca}");
            assert!(connect_ssl(&url(&verified)).await.unwrap());
            assert!(connect_ssl(&url("sslmode=require")).await.unwrap());
            assert!(connect_ssl(&url("sslmode=prefer")).await.unwrap());
            assert!(!connect_ssl(&url("sslmode=disable")).await.unwrap());
            let chain_only = format!("sslmode=verify-ca&sslrootcert={ca}");
            assert!(connect_ssl(&by_name(&chain_only)).await.unwrap());

            // verify-full also checks the name.
            let err = connect_ssl(&by_name(&verified)).await.unwrap_err();
            assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
            assert!(err.to_string().contains("not issued for this host name"), "{err}");

            // Without our CA: the system's roots do not know it (or there are
            // none, which is a usage error saying the same thing).
            let err = connect_ssl(&url("sslmode=verify-full")).await.unwrap_err();
            assert!(err.to_string().contains("sslrootcert"), "{err:#}");

            // require + a root certificate checks the chain, like verify-ca.
            let err = connect_ssl(&url(&format!("sslmode=require&sslrootcert={other_ca}"))).await.unwrap_err();
            assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
            assert!(err.to_string().contains("not signed by a trusted CA"), "{err}");
        });
    }

    #[test]
    fn login_refusals_say_what_to_check() {
        let tls = TlsServer::start();
        block_on(async {
            let admin = tls.server.target().connect().await.unwrap();
            admin.batch_execute("CREATE ROLE bench LOGIN PASSWORD 'right'").await.unwrap();
            connect_ssl(&tls.url("bench:right", "postgres", "")).await.unwrap();

            for (userinfo, dbname, expected) in [
                ("bench:wrong", "postgres", "(SQLSTATE 28P01): check the password (in ~/.pgpass, PGPASSFILE"),
                ("bench", "postgres", "put it in ~/.pgpass or the file PGPASSFILE names (mode 0600)"),
                ("stranger", "postgres", "(SQLSTATE 28000): check the user name `stranger`"),
                ("postgres", "nosuchdb", "(SQLSTATE 3D000): create it (createdb nosuchdb)"),
            ] {
                let err = connect_ssl(&tls.url(userinfo, dbname, "")).await.unwrap_err();
                assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
                let message = err.to_string();
                assert!(message.contains(expected), "{userinfo}: {message}");
                assert!(!message.contains("wrong"), "{message}");
            }
        });
    }

    /// Issue 29, item 7: a self-signed CA certificate presented by the
    /// server (webpki's CaUsedAsEndEntity) gets advice of its own.
    #[test]
    fn a_ca_certificate_presented_by_the_server_is_named() {
        let ca = rustls::OtherError(std::sync::Arc::new(std::io::Error::other("CaUsedAsEndEntity")));
        let advice = super::certificate_advice(&super::CertificateError::Other(ca));
        assert!(advice.contains("a CA certificate") && advice.contains("sslmode=require"), "{advice}");
    }
}
