//! The startup of dbload's own connection: the startup message, the login
//! the server asks for (none, a cleartext or MD5 password, SCRAM-SHA-256,
//! SCRAM-SHA-256-PLUS bound to the TLS session: the exchanges are
//! `postgres-protocol`'s), then the server's parameters and the cancel
//! key, up to the first ReadyForQuery.

use anyhow::Result;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256, SCRAM_SHA_256_PLUS};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio_postgres::error::SqlState;

use super::stream::Session;
use super::{broken, db_error, Wire};
use crate::driver::pg::{PgTarget, PASSWORD_ADVICE};
use crate::error::target;
use crate::op::{ErrorCode, OpError};

/// Logs `wire` in to `pg` and waits for the server to be ready.
pub(super) async fn start(wire: &mut Wire, pg: &PgTarget, session: Session) -> Result<()> {
    let config = pg.config();
    let user = config.get_user().unwrap_or("postgres");
    let mut params = vec![("user", user), ("client_encoding", "UTF8")];
    if let Some(db) = config.get_dbname() {
        params.push(("database", db));
    }
    if let Some(app) = config.get_application_name() {
        params.push(("application_name", app));
    }
    if let Some(options) = config.get_options() {
        params.push(("options", options));
    }
    let refused = |e: OpError| target(format!("cannot connect to {}: {}", pg.redacted(), e.message));
    frontend::startup_message(params, &mut wire.write).map_err(|e| refused(broken(e)))?;
    wire.flush().await.map_err(refused)?;
    let password = || {
        config.get_password().ok_or_else(|| target(format!("cannot connect to {}: {PASSWORD_ADVICE}", pg.redacted())))
    };
    // The server's refusal, with what to check (as tokio-postgres's
    // connections say it: `PgTarget::refusal_advice`).
    let said = |e: OpError| match &e.code {
        Some(ErrorCode::Sqlstate(code)) => target(format!(
            "cannot connect to {}: {} ({}): {}",
            pg.redacted(),
            e.message,
            e.class,
            pg.refusal_advice(&SqlState::from_code(code))
        )),
        _ => refused(e),
    };
    loop {
        match wire.message().await.map_err(refused)? {
            Message::AuthenticationOk => break,
            Message::AuthenticationCleartextPassword => {
                frontend::password_message(password()?, &mut wire.write).map_err(|e| refused(broken(e)))?;
                wire.flush().await.map_err(refused)?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = md5_hash(user.as_bytes(), password()?, body.salt());
                frontend::password_message(hash.as_bytes(), &mut wire.write).map_err(|e| refused(broken(e)))?;
                wire.flush().await.map_err(refused)?;
            }
            Message::AuthenticationSasl(body) => {
                let mut mechanisms = body.mechanisms();
                let (mut scram, mut plus) = (false, false);
                while let Some(m) =
                    fallible_iterator::FallibleIterator::next(&mut mechanisms).map_err(|e| refused(broken(e)))?
                {
                    scram |= m == SCRAM_SHA_256;
                    plus |= m == SCRAM_SHA_256_PLUS;
                }
                let (mechanism, binding) = match (&session, plus) {
                    (Session::Tls(Some(end_point)), true) => {
                        (SCRAM_SHA_256_PLUS, ChannelBinding::tls_server_end_point(end_point.clone()))
                    }
                    // TLS, and a server that offers no binding: say so ('y'),
                    // so a server that did offer it would see the downgrade.
                    (Session::Tls(Some(_)), false) if scram => (SCRAM_SHA_256, ChannelBinding::unrequested()),
                    _ if scram => (SCRAM_SHA_256, ChannelBinding::unsupported()),
                    _ => {
                        return Err(target(format!(
                            "cannot connect to {}: the server offers no SASL mechanism dbload speaks \
                             (SCRAM-SHA-256, SCRAM-SHA-256-PLUS)",
                            pg.redacted()
                        )))
                    }
                };
                sasl(wire, mechanism, binding, password()?).await.map_err(said)?;
                wire.channel_bound = mechanism == SCRAM_SHA_256_PLUS;
            }
            Message::ErrorResponse(body) => return Err(said(db_error(&body))),
            _ => {
                return Err(target(format!(
                    "cannot connect to {}: the server asks for a login dbload does not speak (GSS, SSPI or \
                     Kerberos); use a password or trust",
                    pg.redacted()
                )))
            }
        }
    }
    loop {
        match wire.message().await.map_err(refused)? {
            Message::BackendKeyData(body) => wire.cancel.key = (body.process_id(), body.secret_key()),
            Message::ReadyForQuery(_) => return Ok(()),
            Message::ErrorResponse(body) => return Err(said(db_error(&body))),
            _ => {}
        }
    }
}

/// The SCRAM exchange, by `mechanism` with `binding`.
async fn sasl(wire: &mut Wire, mechanism: &str, binding: ChannelBinding, password: &[u8]) -> Result<(), OpError> {
    let mut scram = ScramSha256::new(password, binding);
    frontend::sasl_initial_response(mechanism, scram.message(), &mut wire.write).map_err(broken)?;
    wire.flush().await?;
    match wire.message().await? {
        Message::AuthenticationSaslContinue(body) => scram.update(body.data()).map_err(broken)?,
        Message::ErrorResponse(body) => return Err(db_error(&body)),
        _ => return Err(broken("an unexpected message in the SCRAM exchange")),
    }
    frontend::sasl_response(scram.message(), &mut wire.write).map_err(broken)?;
    wire.flush().await?;
    match wire.message().await? {
        Message::AuthenticationSaslFinal(body) => scram.finish(body.data()).map_err(broken),
        Message::ErrorResponse(body) => Err(db_error(&body)),
        _ => Err(broken("an unexpected message in the SCRAM exchange")),
    }
}
