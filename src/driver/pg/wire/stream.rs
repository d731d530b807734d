//! How dbload's own connection reaches the server: a TCP or Unix socket,
//! then TLS as `sslmode` asks (libpq's SSLRequest, answered 'S' or 'N'),
//! for the session itself and for the connection a cancel request opens.
//! The TLS client is the target's, built once by `driver/tls.rs` for
//! tokio-postgres's connections and these alike, so both paths check the
//! server the same way. TLS also gives what SCRAM-SHA-256-PLUS binds the
//! login to: the hash of the server's certificate (tls-server-end-point).

use std::io;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::BytesMut;
use const_oid::db::rfc5912::{
    ECDSA_WITH_SHA_256, ECDSA_WITH_SHA_384, ECDSA_WITH_SHA_512, SHA_1_WITH_RSA_ENCRYPTION, SHA_256_WITH_RSA_ENCRYPTION,
    SHA_384_WITH_RSA_ENCRYPTION, SHA_512_WITH_RSA_ENCRYPTION,
};
use const_oid::db::rfc8410::ID_ED_25519;
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use socket2::SockRef;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::config::Host;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_util::either::Either;
use x509_cert::der::Decode as _;

use crate::driver::pg::{no_tls_advice, socket_advice, SslMode, UNREACHED_ADVICE};
use crate::error::target;

/// The stream a connection reads and writes: TCP, a Unix socket, or TLS
/// over TCP (boxed: a TLS session's buffers are large, and rare).
pub(super) type Stream = Either<Either<TcpStream, UnixStream>, Box<TlsStream<TcpStream>>>;

/// One of the target's hosts, as a connection reaches it: its name (what
/// the certificate must name), the address to dial instead if `hostaddr`
/// gave one, and its port.
#[derive(Clone, Debug)]
pub(super) struct Endpoint {
    pub host: Host,
    pub addr: Option<IpAddr>,
    pub port: u16,
}

/// Whether a connection speaks TLS, with libpq's meanings: `Prefer` takes
/// plain text from a server that has no TLS, `Require` does not.
#[derive(Clone)]
pub(super) enum Tls {
    Off,
    Prefer(Arc<ClientConfig>),
    /// With the sslmode that requires it, for the error that says so.
    Require(Arc<ClientConfig>, SslMode),
}

/// A connection opened, before its startup message.
pub(super) struct Opened {
    pub stream: Stream,
    pub session: Session,
}

/// What a login can bind to: nothing (plain text), or a TLS session with
/// its server certificate's tls-server-end-point hash (RFC 5929), when the
/// certificate's signature names a hash; SCRAM-SHA-256-PLUS sends it.
pub(super) enum Session {
    Plain,
    Tls(Option<Vec<u8>>),
}

/// The SSLRequest's answers: go on in TLS, or the server has none.
const TLS_YES: u8 = b'S';
const TLS_NO: u8 = b'N';

/// Opens a connection to `to`, in TLS as `tls` says. Failures are target
/// errors that name `url` (already free of secrets) and what to check.
pub(super) async fn open(to: &Endpoint, tls: &Tls, url: &str) -> anyhow::Result<Opened> {
    let refused = |e: io::Error| {
        crate::driver::out_of_descriptors(url, &e).unwrap_or_else(|| {
            let advice = socket_advice(&e).unwrap_or_else(|| UNREACHED_ADVICE.to_owned());
            target(format!("cannot connect to {url}: {e}: {advice}"))
        })
    };
    let name = match &to.host {
        Host::Unix(dir) => {
            // A socket is never encrypted, whatever sslmode says (as in libpq).
            let path = dir.join(format!(".s.PGSQL.{}", to.port));
            let unix = UnixStream::connect(path).await.map_err(refused)?;
            return Ok(Opened { stream: Either::Left(Either::Right(unix)), session: Session::Plain });
        }
        Host::Tcp(name) => name,
    };
    let mut tcp = match to.addr {
        Some(addr) => TcpStream::connect((addr, to.port)).await,
        None => TcpStream::connect((name.as_str(), to.port)).await,
    }
    .map_err(refused)?;
    // Statements are small and answered one by one: no Nagle delay.
    tcp.set_nodelay(true).map_err(refused)?;
    let (config, required) = match tls {
        Tls::Off => return Ok(Opened { stream: Either::Left(Either::Left(tcp)), session: Session::Plain }),
        Tls::Prefer(config) => (config, None),
        Tls::Require(config, mode) => (config, Some(*mode)),
    };
    let mut request = bytes::BytesMut::with_capacity(8);
    postgres_protocol::message::frontend::ssl_request(&mut request);
    tcp.write_all(&request).await.map_err(refused)?;
    match tcp.read_u8().await.map_err(refused)? {
        TLS_YES => {}
        TLS_NO => match required {
            None => return Ok(Opened { stream: Either::Left(Either::Left(tcp)), session: Session::Plain }),
            Some(mode) => return Err(target(format!("cannot connect to {url}: {}", no_tls_advice(mode)))),
        },
        other => {
            return Err(target(format!(
                "cannot connect to {url}: the server answered the TLS request with {:?}, not S or N: is it a \
                 PostgreSQL server?",
                char::from(other)
            )))
        }
    }
    let server_name = ServerName::try_from(name.clone())
        .map_err(|e| target(format!("cannot connect to {url}: `{name}` is not a host name TLS can check ({e})")))?;
    let tls = TlsConnector::from(config.clone()).connect(server_name, tcp).await.map_err(refused)?;
    let end_point = tls.get_ref().1.peer_certificates().and_then(|certs| certs.first()).and_then(|c| end_point(c));
    Ok(Opened { stream: Either::Right(Box::new(tls)), session: Session::Tls(end_point) })
}

/// The tls-server-end-point binding of a certificate: its hash by the
/// hash of its own signature, SHA-256 for MD5 and SHA-1 (RFC 5929, 4.1);
/// `None` when the signature names none that the RFC maps.
fn end_point(cert: &[u8]) -> Option<Vec<u8>> {
    let oid = x509_cert::Certificate::from_der(cert).ok()?.signature_algorithm.oid;
    let hash = match oid {
        SHA_1_WITH_RSA_ENCRYPTION | SHA_256_WITH_RSA_ENCRYPTION | ECDSA_WITH_SHA_256 => &ring::digest::SHA256,
        SHA_384_WITH_RSA_ENCRYPTION | ECDSA_WITH_SHA_384 => &ring::digest::SHA384,
        // Ed25519 hashes with SHA-512 inside its signature.
        SHA_512_WITH_RSA_ENCRYPTION | ECDSA_WITH_SHA_512 | ID_ED_25519 => &ring::digest::SHA512,
        _ => return None,
    };
    Some(ring::digest::digest(hash, cert).as_ref().to_vec())
}

/// The room a read asks the kernel to fill, at least: an answer of a few
/// rows fits, and a large one takes several reads of the buffer's size.
const READ_ROOM: usize = 4096;

/// Reads what the socket holds now, with one `recv` into `buf`'s spare
/// room and no readiness check: `Ok(0)` is the end of the stream,
/// `WouldBlock` that nothing came yet (and the caller waits on the
/// runtime). A TLS stream's bytes must go through its session, so it
/// always says `WouldBlock`.
///
/// Why not tokio's read: after a read that does not fill the buffer, tokio
/// marks the socket not readable, and the next read waits for the runtime
/// to poll epoll again, though the answer is often already there: on a
/// loaded machine the server's backend answers while the worker is still in
/// `send`. pgbench reads right after it sends (`PQconsumeInput`), and that
/// one `recv` is what kept its client CPU per `select 1` below dbload's:
/// measured here, 8 connections on 2 threads, client CPU per query 5.9-7.6
/// µs with this read against 7.7-9.1 µs without it, epoll waits per query
/// 0.05 against 0.33 (`perf stat`, 4 alternating rounds).
pub(super) fn read_now(stream: &Stream, buf: &mut BytesMut) -> io::Result<usize> {
    let socket = match stream {
        Either::Left(Either::Left(tcp)) => SockRef::from(tcp),
        Either::Left(Either::Right(unix)) => SockRef::from(unix),
        Either::Right(_) => return Err(io::ErrorKind::WouldBlock.into()),
    };
    if buf.capacity() - buf.len() < READ_ROOM {
        buf.reserve(READ_ROOM);
    }
    let n = socket.recv(buf.spare_capacity_mut())?;
    // SAFETY: `recv` wrote the first `n` bytes of the spare room, so they
    // are initialized, and `n` is at most the room's length.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rcgen signs with ECDSA P-256 and SHA-256 by default: the binding is
    /// the certificate's SHA-256.
    #[test]
    fn the_end_point_is_the_certificate_hashed_as_it_was_signed() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["db".to_owned()]).unwrap().self_signed(&key).unwrap();
        let der = cert.der().to_vec();
        assert_eq!(end_point(&der).unwrap(), ring::digest::digest(&ring::digest::SHA256, &der).as_ref());
        assert_eq!(end_point(b"not a certificate"), None);
    }
}
