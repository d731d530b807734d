//! `--metrics-listen ADDR` resolved once: the address the live metrics
//! endpoint binds, written as Prometheus exporters take theirs
//! (`HOST:PORT`, `:PORT` for every interface, a bare port), so that a typo
//! is refused before the run rather than found by a scrape that fails.

use std::net::{SocketAddr, ToSocketAddrs};

use anyhow::Result;

use crate::error::usage;

/// Where the metrics are served: the address as given (for messages) and
/// what it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsListen {
    pub given: String,
    pub addr: SocketAddr,
}

impl MetricsListen {
    /// `HOST:PORT`, `[IPv6]:PORT`, `:PORT` or `PORT` (the last two on
    /// every interface); port 0 lets the system choose one.
    pub fn resolve(given: &str) -> Result<MetricsListen> {
        let bad = |why: String| {
            usage(format!(
                "--metrics-listen {given:?}: {why}; give HOST:PORT (127.0.0.1:9187), :PORT for every interface, or 0 \
                 for a free port"
            ))
        };
        let text = given.trim();
        let spelled = match text.strip_prefix(':') {
            Some(port) => format!("0.0.0.0:{port}"),
            None if text.parse::<u16>().is_ok() => format!("0.0.0.0:{text}"),
            None => text.to_string(),
        };
        let (_, port) = spelled.rsplit_once(':').ok_or_else(|| bad("no port".into()))?;
        port.parse::<u16>().map_err(|_| bad(format!("the port {port:?} is not 0 to 65535")))?;
        let addr = spelled
            .to_socket_addrs()
            .map_err(|e| bad(format!("the host is not known ({e})")))?
            .next()
            .ok_or_else(|| bad("the host has no address".into()))?;
        Ok(MetricsListen { given: given.to_string(), addr })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_host_and_port_or_a_port_alone() {
        let addr = |s: &str| MetricsListen::resolve(s).map(|m| m.addr.to_string());
        assert_eq!(addr("127.0.0.1:9187").unwrap(), "127.0.0.1:9187");
        assert_eq!(addr(":9187").unwrap(), "0.0.0.0:9187");
        assert_eq!(addr("0").unwrap(), "0.0.0.0:0");
        assert_eq!(addr("[::1]:9187").unwrap(), "[::1]:9187");
        assert!(addr("localhost:0").is_ok());
        for bad in ["127.0.0.1", "127.0.0.1:99999", ":http", "", "no such host.invalid:80"] {
            let e = MetricsListen::resolve(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e:#}");
            assert!(format!("{e:#}").starts_with(&format!("--metrics-listen {bad:?}")), "{e:#}");
        }
    }
}
