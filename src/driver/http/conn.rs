//! The transport under every HTTP/1.1 exchange dbload makes: resolved
//! addresses, TCP without Nagle, TLS through rustls, and one connection's
//! reused buffers. `dbload http` and the CrateDB `_sql` driver both sit on
//! it, so a fix to connecting, TLS or the error advice reaches both.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::Result;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf as TokioReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::wire::{self, Body, ReadBuf, ReadError, RequestHead};
use crate::driver::tls::{self, ca_as_server_certificate, out_of_validity, Verification};
use crate::error::{target, usage};

/// The rustls client for `https` targets: the system's CAs, or no
/// verification at all with `insecure`; HTTP/1.1 is the only protocol
/// offered. `url` (redacted) names the target in messages.
pub(in crate::driver) fn tls_connector(insecure: bool, url: &str) -> Result<TlsConnector> {
    let verification = if insecure { Verification::None } else { Verification::ChainAndName };
    let mut config = tls::client_config(verification, || {
        tls::system_roots().ok_or_else(|| {
            usage(format!(
                "{url} is https, and this system has no trusted CA certificates to verify it: install the \
                 ca-certificates package, or pass --insecure to encrypt without verifying the server"
            ))
        })
    })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsConnector::from(Arc::new(config)))
}

/// Where one connection goes: the addresses of a host (resolved once: like
/// k6, DNS is not part of each request) and, for https, the TLS client and
/// the name the certificate must carry.
pub(in crate::driver) struct Connector {
    addrs: Vec<SocketAddr>,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    /// The target's URL, password redacted, for messages.
    url: String,
    /// What to check when the port refuses connections, for messages.
    refused_advice: &'static str,
}

impl Connector {
    pub async fn resolve(
        host: &str,
        port: u16,
        tls: Option<TlsConnector>,
        url: &str,
        refused_advice: &'static str,
    ) -> Result<Connector> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| target(format!("cannot resolve {url}: {e}: check the host name in the URL")))?
            .collect();
        if addrs.is_empty() {
            return Err(target(format!("{url}: the host name has no address")));
        }
        let tls = match tls {
            Some(connector) => {
                let name = ServerName::try_from(host.to_owned())
                    .map_err(|e| usage(format!("{url}: {e}: not a host name TLS can verify")))?;
                Some((connector, name))
            }
            None => None,
        };
        Ok(Connector { addrs, tls, url: url.to_owned(), refused_advice })
    }

    /// A new connection, and how long TCP and TLS took.
    pub async fn connect(&self) -> Result<(Stream, Duration, Duration), ConnectError> {
        let t = Instant::now();
        let mut last = None;
        let mut tcp = None;
        for addr in &self.addrs {
            match TcpStream::connect(addr).await {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let tcp = match tcp {
            Some(s) => s,
            None => return Err(ConnectError::Tcp(last.unwrap_or_else(|| io::ErrorKind::NotFound.into()))),
        };
        // Requests are small and answered one by one: no Nagle delay.
        tcp.set_nodelay(true).map_err(ConnectError::Tcp)?;
        let connecting = t.elapsed();
        let Some((connector, name)) = &self.tls else { return Ok((Stream::Plain(tcp), connecting, Duration::ZERO)) };
        let t = Instant::now();
        let tls = connector.connect(name.clone(), tcp).await.map_err(ConnectError::Tls)?;
        Ok((Stream::Tls(Box::new(tls)), connecting, t.elapsed()))
    }

    /// Turns a failed first connection into a target error (exit code 3)
    /// that says what to check.
    pub fn connect_error(&self, e: ConnectError) -> anyhow::Error {
        if let Some(e) = match &e {
            ConnectError::Tcp(io) => crate::driver::out_of_descriptors(&self.url, io),
            ConnectError::Tls(_) => None,
        } {
            return e;
        }
        let advice = match &e {
            ConnectError::Tcp(io) if io.kind() == io::ErrorKind::ConnectionRefused => self.refused_advice,
            ConnectError::Tcp(_) => "check the host name and port, and that the server is reachable",
            ConnectError::Tls(io) => match tls_error(io) {
                Some(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer | rustls::CertificateError::BadSignature,
                )) => {
                    "the server's certificate is not signed by a CA this system trusts: add that CA to the \
                     system's store, or pass --insecure to encrypt without verifying the server"
                }
                Some(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. },
                )) => {
                    "the server's certificate is not issued for this host name: use a name it lists, or pass \
                     --insecure"
                }
                Some(rustls::Error::InvalidCertificate(cert)) if ca_as_server_certificate(cert) => {
                    "the server presents a CA certificate as its own (a self-signed CA?): give the server a \
                     certificate that CA issued, or pass --insecure to encrypt without verifying the server"
                }
                Some(rustls::Error::InvalidCertificate(cert)) if out_of_validity(cert) => {
                    "the server's certificate is outside its validity period: renew it, check this machine's \
                     clock, or pass --insecure"
                }
                Some(rustls::Error::InvalidCertificate(_)) => {
                    "the server's certificate was rejected for the reason above: fix it, or pass --insecure"
                }
                _ => "the TLS handshake failed: is the server speaking https on this port?",
            },
        };
        target(format!("cannot connect to {}: {e}: {advice}", self.url))
    }
}

pub(in crate::driver) enum ConnectError {
    Tcp(io::Error),
    Tls(io::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Tcp(e) => write!(f, "{e}"),
            ConnectError::Tls(e) => write!(f, "TLS: {e}"),
        }
    }
}

/// tokio-rustls wraps the rustls error in an io::Error, reached through `get_ref`.
fn tls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>())
}

/// A connection, with or without TLS.
pub(in crate::driver) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut TokioReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// A connection's state: the stream while it is open, and the buffers it
/// reuses for every request (no allocation per request).
#[derive(Default)]
pub(in crate::driver) struct Conn {
    pub stream: Option<Stream>,
    /// The last request, head and body, as written.
    pub write: Vec<u8>,
    pub read: ReadBuf,
    /// The last response's body, as much of it as the owner keeps (see
    /// [`Body::keeping`]; the default keeps none).
    pub body: Body,
    /// The last response's reason phrase (and headers, when kept).
    pub head: wire::Kept,
}

/// What could go wrong in one exchange, before the caller classifies it.
pub(in crate::driver) enum Failure {
    Connect(ConnectError),
    Write(io::Error),
    Read(ReadError),
}

/// When the request went out: sending began at `.0` and ended at `.1`.
pub(in crate::driver) type Sent = (Instant, Instant);

impl Conn {
    /// Adopts a freshly opened stream; what a closed one left unread goes.
    pub fn open(&mut self, stream: Stream) -> &mut Stream {
        self.read.clear();
        self.stream.insert(stream)
    }

    /// Sends one request on the open stream and reads its response, body
    /// into [`Conn::body`] as far as that keeps it. The caller opens the stream first (and decides
    /// what to do with it on failure: it cannot carry another request).
    pub async fn round_trip(
        &mut self,
        head: &RequestHead,
        body: &[u8],
        head_request: bool,
    ) -> Result<(wire::Response, Sent), Failure> {
        let stream = self.stream.as_mut().expect("round_trip on an open stream");
        self.write.clear();
        head.encode(body, &mut self.write);
        let sending = Instant::now();
        stream.write_all(&self.write).await.map_err(Failure::Write)?;
        self.receive(sending, head_request).await
    }

    /// [`Conn::round_trip`] for a body that `fill` writes a piece at a time
    /// (returns whether more follows), each piece sent as a chunk as soon
    /// as it is written: the connection holds one piece, not the body.
    pub async fn round_trip_chunked(
        &mut self,
        head: &RequestHead,
        fill: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
    ) -> Result<(wire::Response, Sent), Failure> {
        let stream = self.stream.as_mut().expect("round_trip on an open stream");
        self.write.clear();
        head.encode_chunked(&mut self.write);
        let sending = Instant::now();
        // The head goes out with the first piece.
        while wire::chunk(&mut self.write, &mut *fill) {
            stream.write_all(&self.write).await.map_err(Failure::Write)?;
            self.write.clear();
        }
        stream.write_all(&self.write).await.map_err(Failure::Write)?;
        self.receive(sending, false).await
    }

    /// Ends a request whose bytes are written, sending began at `sending`,
    /// and reads its response.
    async fn receive(&mut self, sending: Instant, head_request: bool) -> Result<(wire::Response, Sent), Failure> {
        let stream = self.stream.as_mut().expect("round_trip on an open stream");
        stream.flush().await.map_err(Failure::Write)?;
        let sent = Instant::now();
        let r = wire::read_response(stream, &mut self.read, &mut self.body, &mut self.head, head_request)
            .await
            .map_err(Failure::Read)?;
        Ok((r, (sending, sent)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// The message for a TLS handshake that failed on `cert`.
    fn refused(cert: rustls::CertificateError) -> String {
        let c = Connector { addrs: Vec::new(), tls: None, url: "https://h/".into(), refused_advice: "" };
        let io = io::Error::new(io::ErrorKind::InvalidData, rustls::Error::InvalidCertificate(cert));
        c.connect_error(ConnectError::Tls(io)).to_string()
    }

    /// Issue 29, item 7: a server presenting a self-signed CA certificate
    /// (webpki's CaUsedAsEndEntity, which rustls passes on as `Other`) was
    /// told its certificate had perhaps expired.
    #[test]
    fn a_certificate_is_not_called_expired_unless_it_is() {
        let ca = rustls::OtherError(Arc::new(io::Error::other("CaUsedAsEndEntity")));
        let e = refused(rustls::CertificateError::Other(ca));
        assert!(!e.contains("expired") && e.contains("a CA certificate") && e.contains("--insecure"), "{e}");
        let e = refused(rustls::CertificateError::Expired);
        assert!(e.contains("validity period") && e.contains("clock"), "{e}");
        let e = refused(rustls::CertificateError::Revoked);
        assert!(!e.contains("expired") && e.contains("rejected"), "{e}");
    }
}
