//! A small Chrome DevTools Protocol client over one WebSocket
//! (`tokio-tungstenite`): numbered calls answered by id, events handed to
//! one receiver, flat sessions (`sessionId` on every message).
//!
//! Every message from the browser goes through [`parse_message`] (its own
//! fuzz target, `cdp_message`): a message that is not one of the two
//! shapes is dropped with a warning, never a panic.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::error::BrowserError;

/// The largest message taken from the browser (a full-page screenshot or
/// a PDF is base64 in one message).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The longest method name taken.
const MAX_METHOD_CHARS: usize = 256;

/// An error the browser answered a call with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// The protocol's error code.
    pub code: i64,
    /// Its message.
    pub message: String,
}

/// One message from the browser.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to call `id`.
    Response {
        /// The call's id.
        id: u64,
        /// The result object, or the browser's error.
        outcome: Result<Value, RemoteError>,
    },
    /// An event.
    Event {
        /// `Domain.event`.
        method: String,
        /// The flat session it belongs to (none: the browser's own).
        session_id: Option<String>,
        /// Its parameters (an object; `{}` when absent).
        params: Value,
    },
}

/// Why a message from the browser was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Over [`MAX_MESSAGE_BYTES`].
    #[error("message of {0} bytes is over the limit")]
    TooLarge(usize),
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// JSON, but neither a response nor an event.
    #[error("not a CDP message: {0}")]
    Shape(&'static str),
}

/// Parse one text message from the browser.
pub fn parse_message(text: &str) -> Result<Incoming, ParseError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(ParseError::TooLarge(text.len()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| ParseError::Json(e.to_string()))?;
    let Value::Object(mut obj) = value else {
        return Err(ParseError::Shape("not an object"));
    };
    if let Some(id) = obj.get("id") {
        let id = id
            .as_u64()
            .ok_or(ParseError::Shape("id is not an unsigned integer"))?;
        if let Some(err) = obj.remove("error") {
            let code = err
                .get("code")
                .and_then(Value::as_i64)
                .ok_or(ParseError::Shape("error without an integer code"))?;
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .ok_or(ParseError::Shape("error without a message"))?;
            return Ok(Incoming::Response {
                id,
                outcome: Err(RemoteError {
                    code,
                    message: message.chars().take(2000).collect(),
                }),
            });
        }
        let result = match obj.remove("result") {
            Some(Value::Object(m)) => Value::Object(m),
            Some(_) => return Err(ParseError::Shape("result is not an object")),
            None => Value::Object(Map::new()),
        };
        return Ok(Incoming::Response {
            id,
            outcome: Ok(result),
        });
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) if !m.is_empty() && m.chars().count() <= MAX_METHOD_CHARS => m,
        Some(Value::String(_)) => return Err(ParseError::Shape("method is empty or too long")),
        Some(_) => return Err(ParseError::Shape("method is not a string")),
        None => return Err(ParseError::Shape("neither id nor method")),
    };
    let session_id = match obj.remove("sessionId") {
        Some(Value::String(s)) => Some(s),
        None | Some(Value::Null) => None,
        Some(_) => return Err(ParseError::Shape("sessionId is not a string")),
    };
    let params = match obj.remove("params") {
        Some(Value::Object(m)) => Value::Object(m),
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(_) => return Err(ParseError::Shape("params is not an object")),
    };
    Ok(Incoming::Event {
        method,
        session_id,
        params,
    })
}

/// A message on the DevTools pipe that was over [`MAX_MESSAGE_BYTES`]
/// before its NUL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a message of over {MAX_MESSAGE_BYTES} bytes (no NUL yet)")]
pub struct FrameTooLarge;

/// Splits the bytes of a `--remote-debugging-pipe` stream into its
/// NUL-ended messages (each as text, invalid UTF-8 replaced), holding at
/// most [`MAX_MESSAGE_BYTES`] of an unfinished one (its own fuzz target,
/// `cdp_pipe`).
#[derive(Debug, Default)]
pub struct PipeFramer {
    partial: Vec<u8>,
}

impl PipeFramer {
    /// Take `bytes`; the messages they finish, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, FrameTooLarge> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == 0) {
            if self.partial.len() + end > MAX_MESSAGE_BYTES {
                return Err(FrameTooLarge);
            }
            self.partial.extend_from_slice(&rest[..end]);
            out.push(String::from_utf8_lossy(&self.partial).into_owned());
            self.partial.clear();
            rest = &rest[end + 1..];
        }
        if self.partial.len() + rest.len() > MAX_MESSAGE_BYTES {
            return Err(FrameTooLarge);
        }
        self.partial.extend_from_slice(rest);
        Ok(out)
    }

    /// Bytes of an unfinished message held.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }
}

/// An event from the browser, as the receiver gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `Domain.event`.
    pub method: String,
    /// Its flat session.
    pub session_id: Option<String>,
    /// Its parameters.
    pub params: Value,
}

type Pending = Mutex<HashMap<u64, oneshot::Sender<Result<Value, RemoteError>>>>;

/// A connection to the browser. Cheap to clone; the socket closes when
/// the last clone is dropped (or the browser goes away).
#[derive(Debug, Clone)]
pub struct Cdp {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    next_id: AtomicU64,
    pending: Arc<Pending>,
    out: mpsc::UnboundedSender<String>,
}

impl Cdp {
    /// Connect to `ws_url` (the browser's `/devtools/browser/<id>`
    /// endpoint on loopback) within `timeout`. Events go to the returned
    /// receiver, which ends when the connection does.
    pub async fn connect(
        ws_url: &str,
        timeout: Duration,
    ) -> Result<(Cdp, mpsc::UnboundedReceiver<Event>), BrowserError> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let connect = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), false);
        let (ws, _) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| BrowserError::Timeout {
                what: "connecting to the browser's DevTools endpoint".to_owned(),
                millis: timeout.as_millis() as u64,
            })?
            .map_err(|e| BrowserError::Unavailable(format!("DevTools connection failed: {e}")))?;
        let (mut sink, mut stream) = ws.split();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let (in_tx, in_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(msg) = stream.next().await {
                let text = match msg {
                    Ok(Message::Text(t)) => t,
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => continue,
                };
                if in_tx.send(text.as_str().to_owned()).is_err() {
                    break;
                }
            }
        });
        Ok(Cdp::over(out_tx, in_rx))
    }

    /// Talk to a browser started with `--remote-debugging-pipe` over its
    /// pipes (`reader` is the browser's descriptor 4, `writer` its
    /// descriptor 3): each message is JSON ended by a NUL byte, both
    /// ways. No port is opened anywhere. A message over
    /// [`MAX_MESSAGE_BYTES`] ends the connection.
    pub fn connect_pipe<R, W>(reader: R, writer: W) -> (Cdp, mpsc::UnboundedReceiver<Event>)
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut writer = writer;
            while let Some(text) = out_rx.recv().await {
                let mut bytes = text.into_bytes();
                bytes.push(0);
                if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        let (in_tx, in_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut reader = reader;
            let mut framer = PipeFramer::default();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let frames = match framer.push(&buf[..n]) {
                    Ok(frames) => frames,
                    Err(e) => {
                        tracing::warn!(target: "talon::browser", "DevTools pipe: {e}; closing the connection");
                        break;
                    }
                };
                if frames.into_iter().any(|text| in_tx.send(text).is_err()) {
                    break;
                }
            }
        });
        Cdp::over(out_tx, in_rx)
    }

    /// A connection over two channels of whole messages: what is sent
    /// goes to `out`, what comes from `incoming` is parsed and answered
    /// or handed on as an event.
    fn over(
        out: mpsc::UnboundedSender<String>,
        mut incoming: mpsc::UnboundedReceiver<String>,
    ) -> (Cdp, mpsc::UnboundedReceiver<Event>) {
        let (event_tx, event_rx) = mpsc::unbounded_channel::<Event>();
        let pending: Arc<Pending> = Arc::new(Mutex::new(HashMap::new()));
        let reader_pending = Arc::clone(&pending);
        tokio::spawn(async move {
            while let Some(text) = incoming.recv().await {
                match parse_message(&text) {
                    Ok(Incoming::Response { id, outcome }) => {
                        let waiter = reader_pending.lock().ok().and_then(|mut p| p.remove(&id));
                        if let Some(w) = waiter {
                            let _ = w.send(outcome);
                        }
                    }
                    Ok(Incoming::Event {
                        method,
                        session_id,
                        params,
                    }) => {
                        let _ = event_tx.send(Event {
                            method,
                            session_id,
                            params,
                        });
                    }
                    Err(e) => {
                        tracing::warn!(target: "talon::browser", "dropped a DevTools message: {e}")
                    }
                }
            }
            // The browser is gone: every waiting call fails now.
            if let Ok(mut p) = reader_pending.lock() {
                p.clear();
            }
        });
        (
            Cdp {
                inner: Arc::new(Inner {
                    next_id: AtomicU64::new(1),
                    pending,
                    out,
                }),
            },
            event_rx,
        )
    }

    /// Call `method` (in `session`, or on the browser) and wait at most
    /// `timeout` for its answer.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, BrowserError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let (Some(s), Some(obj)) = (session, msg.as_object_mut()) {
            obj.insert("sessionId".to_owned(), Value::String(s.to_owned()));
        }
        let (tx, rx) = oneshot::channel();
        match self.inner.pending.lock() {
            Ok(mut p) => {
                p.insert(id, tx);
            }
            Err(_) => return Err(BrowserError::Closed),
        }
        if self.inner.out.send(msg.to_string()).is_err() {
            self.forget(id);
            return Err(BrowserError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err(e))) => Err(BrowserError::Protocol {
                method: method.to_owned(),
                message: e.message,
            }),
            Ok(Err(_)) => Err(BrowserError::Closed),
            Err(_) => {
                self.forget(id);
                Err(BrowserError::Timeout {
                    what: format!("`{method}`"),
                    millis: timeout.as_millis() as u64,
                })
            }
        }
    }

    /// Send `method` without waiting for its answer.
    pub fn send(&self, session: Option<&str>, method: &str, params: Value) {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let (Some(s), Some(obj)) = (session, msg.as_object_mut()) {
            obj.insert("sessionId".to_owned(), Value::String(s.to_owned()));
        }
        let _ = self.inner.out.send(msg.to_string());
    }

    fn forget(&self, id: u64) {
        if let Ok(mut p) = self.inner.pending.lock() {
            p.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_frames_split_at_nul_across_reads() {
        let mut f = PipeFramer::default();
        assert_eq!(f.push(b"{\"id\":1"), Ok(vec![]));
        assert_eq!(f.pending(), 7);
        assert_eq!(
            f.push(b",\"result\":{}}\0{\"method\":\"A.b\"}\0{"),
            Ok(vec![
                r#"{"id":1,"result":{}}"#.to_owned(),
                r#"{"method":"A.b"}"#.to_owned()
            ])
        );
        assert_eq!(f.pending(), 1);
        assert_eq!(f.push(b"\0\0"), Ok(vec!["{".to_owned(), String::new()]));
        let mut big = PipeFramer::default();
        assert_eq!(
            big.push(&vec![b'x'; MAX_MESSAGE_BYTES]).map(|v| v.len()),
            Ok(0)
        );
        assert_eq!(big.push(b"x"), Err(FrameTooLarge));
    }

    #[test]
    fn responses_events_and_garbage() {
        assert_eq!(
            parse_message(r#"{"id":3,"result":{"a":1}}"#),
            Ok(Incoming::Response {
                id: 3,
                outcome: Ok(json!({"a":1}))
            })
        );
        assert_eq!(
            parse_message(r#"{"id":4,"error":{"code":-32000,"message":"No node"}}"#),
            Ok(Incoming::Response {
                id: 4,
                outcome: Err(RemoteError {
                    code: -32000,
                    message: "No node".to_owned()
                })
            })
        );
        assert_eq!(
            parse_message(
                r#"{"method":"Page.loadEventFired","sessionId":"S","params":{"timestamp":1}}"#
            ),
            Ok(Incoming::Event {
                method: "Page.loadEventFired".to_owned(),
                session_id: Some("S".to_owned()),
                params: json!({"timestamp":1})
            })
        );
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"id":-1,"result":{}}"#,
            r#"{"id":1,"result":[]}"#,
            r#"{"id":1,"error":{"message":"x"}}"#,
            r#"{"method":7}"#,
            r#"{"method":""}"#,
            r#"{"method":"A.b","params":"x"}"#,
            r#"{"method":"A.b","sessionId":1}"#,
        ] {
            assert!(parse_message(bad).is_err(), "{bad}");
        }
    }
}
