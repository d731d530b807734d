//! COPY on dbload's own connection, without the wait: a batch's COPY
//! statement, its rows and its end go out in one write, so a batch costs
//! the server's work and one round trip, where tokio-postgres's `copy_in`
//! waits for the server to answer the statement before it sends a row.
//! The server takes data before its CopyInResponse; a server that does not
//! (a pooler, a wire-compatible engine) gets the waiting form.
//!
//! Each batch is a simple Query of its own, so its own transaction: it
//! commits when the server answers it. The server also discards the data
//! behind a COPY it refused (it ignores CopyData and CopyDone outside a
//! COPY), so the connection is usable after any error. And that is the
//! trap of a window of batches in flight: those sent behind a refused one
//! still run and commit. [`Wire::copy_window`] stops sending at the first
//! error and reports every batch it sent, acknowledged or not.

use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::{broken, db_error, Answered, Wire};
use crate::op::OpError;

/// Bytes of a COPY's data buffered before they are sent: large beside a
/// CopyData's 5 bytes of framing and a write's cost, small beside a batch
/// (10,000 rows of 10 metrics: 1.4 MB), which is never held whole.
const SEND_AT: usize = 64 * 1024;

impl Wire {
    /// Adds one batch to what is to be sent: `statement` (a `COPY ... FROM
    /// STDIN`, as a simple Query), `data` as one CopyData, and CopyDone.
    /// [`Wire::flush`] sends it, [`Wire::answer`] reads its answer (the
    /// rows the server wrote, or its error), as for a statement.
    pub fn push_copy(&mut self, statement: &str, data: &[u8]) -> Result<(), OpError> {
        let copy_data = frontend::CopyData::new(data).map_err(|e| OpError::new("client error", e.to_string()))?;
        frontend::query(statement, &mut self.write).map_err(broken)?;
        copy_data.write(&mut self.write);
        frontend::copy_done(&mut self.write);
        self.sent_whole();
        Ok(())
    }

    /// Sends one batch without waiting for the COPY to be answered first,
    /// and returns the rows the server wrote (and committed).
    pub async fn copy_in(&mut self, statement: &str, data: &[u8]) -> Result<u64, OpError> {
        self.copy_pieces(statement, std::iter::once(data), Answered::NotAwaited).await
    }

    /// Sends one batch the waiting way: the COPY statement, then its data
    /// once the server answered it with CopyInResponse. For servers that
    /// do not take data before that answer.
    pub async fn copy_in_waiting(&mut self, statement: &str, data: &[u8]) -> Result<u64, OpError> {
        self.copy_pieces(statement, std::iter::once(data), Answered::Awaited).await
    }

    /// Sends one batch whose data comes in `pieces` (a batch encoded as it
    /// is sent, as ingest's are), each a CopyData message, and returns the
    /// rows the server wrote (and committed). What is buffered goes out
    /// each time it passes `SEND_AT`, so the connection holds about that
    /// much of a batch, never the whole of it; the first write carries the
    /// statement with the first pieces unless `answered` says to wait for
    /// the server's CopyInResponse first. `statement` may go on after the
    /// COPY (`COPY stage FROM STDIN; INSERT ... SELECT FROM stage`): the
    /// whole Query is one transaction, answered with its last statement's
    /// count.
    pub async fn copy_pieces<P: AsRef<[u8]>>(
        &mut self,
        statement: &str,
        pieces: impl Iterator<Item = P>,
        answered: Answered,
    ) -> Result<u64, OpError> {
        frontend::query(statement, &mut self.write).map_err(broken)?;
        self.sent_whole();
        if answered == Answered::Awaited {
            self.flush().await?;
            self.copy_in_response(statement).await?;
        }
        for piece in pieces {
            let data = frontend::CopyData::new(piece.as_ref()).map_err(|e| OpError::new("client error", e.to_string()));
            match data {
                Ok(data) => data.write(&mut self.write),
                Err(e) => {
                    // Ends the COPY, so the connection goes on: the server
                    // answers CopyFail with an error.
                    frontend::copy_fail(&e.message, &mut self.write).map_err(broken)?;
                    self.flush().await?;
                    let _ = self.answer().await;
                    return Err(e);
                }
            }
            if self.write.len() >= SEND_AT {
                self.flush().await?;
            }
        }
        frontend::copy_done(&mut self.write);
        self.flush().await?;
        self.answer().await
    }

    /// Reads the server's answer to a COPY statement sent alone: its
    /// CopyInResponse, or its error (then the statement is answered).
    async fn copy_in_response(&mut self, statement: &str) -> Result<(), OpError> {
        let mut failed = None;
        loop {
            match self.message().await? {
                Message::CopyInResponse(_) => return Ok(()),
                Message::ErrorResponse(body) => failed = Some(db_error(&body)),
                Message::ReadyForQuery(_) => {
                    self.in_flight.pop_front();
                    return Err(failed.unwrap_or_else(|| {
                        OpError::new("client error", format!("not a COPY ... FROM STDIN: {statement}"))
                    }));
                }
                _ => {}
            }
        }
    }

    /// Sends `batches`, each a COPY of its own by `statement`, with up to
    /// `depth` of them in flight, and tells `acknowledged` each batch sent
    /// with its index and answer, in order. Batches behind a refused one
    /// still commit, so none is sent once an error was read; those already
    /// in flight are read to their answers, each counted as the server said.
    /// A lost connection fails every batch in flight (whether the server
    /// wrote them is unknown). Returns how many batches it reported (sent,
    /// or too large for a message and refused before that); those after
    /// are not attempted. Call it with no statement in flight.
    pub async fn copy_window<'a>(
        &mut self,
        statement: &str,
        batches: impl IntoIterator<Item = &'a [u8]>,
        depth: usize,
        mut acknowledged: impl FnMut(usize, Result<u64, OpError>),
    ) -> usize {
        let mut batches = batches.into_iter();
        let (mut sent, mut answered) = (0, 0);
        // A batch that could not be framed: after those before it.
        let mut unsendable = None;
        let mut stop = false;
        loop {
            while !stop && self.in_flight() < depth.max(1) {
                let Some(batch) = batches.next() else { break };
                match self.push_copy(statement, batch) {
                    Ok(()) => sent += 1,
                    Err(e) => {
                        unsendable = Some(e);
                        stop = true;
                    }
                }
            }
            if self.in_flight.is_empty() {
                break;
            }
            let answer = match self.flush().await {
                Ok(()) => self.answer().await,
                Err(e) => Err(e),
            };
            let fatal = matches!(&answer, Err(e) if e.fatal);
            stop |= answer.is_err();
            acknowledged(answered, answer);
            answered += 1;
            if fatal {
                for index in answered..sent {
                    acknowledged(index, Err(OpError::fatal("connection lost", "lost while the batch was in flight")));
                }
                answered = sent;
                self.in_flight.clear();
                self.write.clear();
                break;
            }
        }
        if let Some(e) = unsendable {
            acknowledged(answered, Err(e));
            sent += 1;
        }
        sent
    }
}
