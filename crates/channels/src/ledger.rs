//! The send ledger: a send is written ahead under its idempotency key
//! (committed and synced before anything goes out) and marked when it
//! ends, so a repeat of the same key never sends twice.
//!
//! A repeat finds one of: `sent` (the first receipt is answered again,
//! nothing is sent), `started` or `unknown` (the process died mid-send, or
//! the channel timed out after the text may have left: refused with
//! `message.interrupted`, never re-sent), `failed` (the channel refused
//! before anything could have gone out: sent again).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::error::{ChannelError, Result};
use crate::webhook::now_ms;

/// The ledger's file name in the state directory.
pub const LEDGER_FILE: &str = "channels-sends.sqlite";

/// What [`SendLedger::begin`] found for a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Begin {
    /// New (or an earlier attempt failed before sending): the start is
    /// recorded; send, then [`SendLedger::finish`].
    Proceed,
    /// Sent before: this was its receipt. Do not send.
    AlreadySent(Value),
}

/// How a send ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SendEnd {
    /// Delivered, with the channel's receipt.
    Sent(Value),
    /// Refused before anything could have gone out; a repeat may send.
    Failed,
    /// It may have gone out (a timeout after the request left, a
    /// cancelled call); a repeat is refused.
    Unknown,
}

/// The ledger (one SQLite file, WAL, `synchronous=FULL`).
#[derive(Debug)]
pub struct SendLedger {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SendLedger {
    /// Open (creating) the ledger at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let fail = |e: rusqlite::Error| ChannelError::Ledger {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ChannelError::Ledger {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        }
        let conn = Connection::open(path).map_err(fail)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;
             PRAGMA busy_timeout=5000;
             CREATE TABLE IF NOT EXISTS sends (
                 key TEXT PRIMARY KEY,
                 channel TEXT NOT NULL,
                 action TEXT NOT NULL,
                 state TEXT NOT NULL CHECK (state IN ('started','sent','failed','unknown')),
                 started_at_ms INTEGER NOT NULL,
                 finished_at_ms INTEGER,
                 receipt TEXT
             );",
        )
        .map_err(fail)?;
        Ok(SendLedger {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> ChannelError {
        ChannelError::Ledger {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    /// Record the start of a send under `key`, or say why not to send.
    pub fn begin(&self, key: &str, channel: &str, action: &str) -> Result<Begin> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction().map_err(|e| self.fail(e))?;
        let found: Option<(String, i64, Option<String>)> = tx
            .query_row(
                "SELECT state, started_at_ms, receipt FROM sends WHERE key = ?1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        match found {
            Some((state, _, receipt)) if state == "sent" => {
                let receipt = receipt
                    .and_then(|r| serde_json::from_str(&r).ok())
                    .unwrap_or(Value::Null);
                return Ok(Begin::AlreadySent(receipt));
            }
            Some((state, started, _)) if state == "started" || state == "unknown" => {
                return Err(ChannelError::Interrupted {
                    key: key.to_owned(),
                    started_at_ms: u64::try_from(started).unwrap_or(0),
                });
            }
            _ => {}
        }
        tx.execute(
            "INSERT INTO sends (key, channel, action, state, started_at_ms)
             VALUES (?1, ?2, ?3, 'started', ?4)
             ON CONFLICT(key) DO UPDATE SET state = 'started', channel = ?2, action = ?3,
                 started_at_ms = ?4, finished_at_ms = NULL, receipt = NULL",
            params![
                key,
                channel,
                action,
                i64::try_from(now_ms()).unwrap_or(i64::MAX)
            ],
        )
        .map_err(|e| self.fail(e))?;
        tx.commit().map_err(|e| self.fail(e))?;
        Ok(Begin::Proceed)
    }

    /// Record how the send under `key` ended.
    pub fn finish(&self, key: &str, end: &SendEnd) -> Result<()> {
        let (state, receipt) = match end {
            SendEnd::Sent(r) => ("sent", Some(r.to_string())),
            SendEnd::Failed => ("failed", None),
            SendEnd::Unknown => ("unknown", None),
        };
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "UPDATE sends SET state = ?2, receipt = ?3, finished_at_ms = ?4
             WHERE key = ?1 AND state = 'started'",
            params![
                key,
                state,
                receipt,
                i64::try_from(now_ms()).unwrap_or(i64::MAX)
            ],
        )
        .map_err(|e| self.fail(e))?;
        Ok(())
    }

    /// The keys whose record is in `state` (`started`, `sent`, `failed`,
    /// `unknown`), for tests and diagnostics.
    pub fn keys_in(&self, state: &str) -> Result<Vec<String>> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn
            .prepare("SELECT key FROM sends WHERE state = ?1 ORDER BY started_at_ms")
            .map_err(|e| self.fail(e))?;
        let keys = stmt
            .query_map(params![state], |r| r.get(0))
            .map_err(|e| self.fail(e))?
            .collect::<std::result::Result<Vec<String>, _>>()
            .map_err(|e| self.fail(e))?;
        Ok(keys)
    }

    /// The state recorded for `key` (`started`, `sent`, `failed`,
    /// `unknown`), for tests and diagnostics.
    pub fn state(&self, key: &str) -> Result<Option<String>> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.query_row(
            "SELECT state FROM sends WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.fail(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_sends_once_and_a_crash_is_never_repeated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LEDGER_FILE);
        let ledger = SendLedger::open(&path).unwrap();
        assert_eq!(
            ledger.begin("k1", "webhook", "send").unwrap(),
            Begin::Proceed
        );
        ledger
            .finish("k1", &SendEnd::Sent(json!({"messageId": "m"})))
            .unwrap();
        assert_eq!(
            ledger.begin("k1", "webhook", "send").unwrap(),
            Begin::AlreadySent(json!({"messageId": "m"}))
        );
        // A failure before sending may be retried.
        assert_eq!(
            ledger.begin("k2", "webhook", "send").unwrap(),
            Begin::Proceed
        );
        ledger.finish("k2", &SendEnd::Failed).unwrap();
        assert_eq!(
            ledger.begin("k2", "webhook", "send").unwrap(),
            Begin::Proceed
        );
        // Started and never finished (the process died): reopened, it is
        // interrupted, not sent again.
        assert_eq!(ledger.begin("k3", "irc", "send").unwrap(), Begin::Proceed);
        drop(ledger);
        let ledger = SendLedger::open(&path).unwrap();
        let err = ledger.begin("k3", "irc", "send").unwrap_err();
        assert_eq!(err.code().as_str(), "message.interrupted");
        assert_eq!(ledger.state("k3").unwrap().as_deref(), Some("started"));
        // A timeout: it may have gone out.
        assert_eq!(ledger.begin("k4", "irc", "send").unwrap(), Begin::Proceed);
        ledger.finish("k4", &SendEnd::Unknown).unwrap();
        assert!(ledger.begin("k4", "irc", "send").is_err());
    }
}
