//! The IRC channel: one client connection (plain text; `tls: true` is
//! refused, never downgraded), opened on first use through the egress
//! guard, registered (`PASS`, `NICK`, `USER`, wait for `001`) and joined
//! to the configured channels. A reader task answers `PING`s and keeps the
//! recent messages per target for `read`.
//!
//! IRC has no delivery receipt, so every send ends with a `PING` whose
//! `PONG` says the server processed the lines before it; an error numeric
//! in between (`401` no such nick, `404` cannot send to channel, ...) is a
//! `message.rejected`. IRC has no message ids, threads or reactions: ids
//! are Talon's own (each message seen or sent gets one, shown by `read`),
//! `reply` addresses the author by nick (`alice: text`) and `react` is a
//! CTCP ACTION (`* talon reacted 👍 to alice: "text"`).

pub mod line;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use talon_config::IrcChannelConfig;
use talon_config::channel_connections::{
    DEFAULT_IRC_HISTORY, DEFAULT_IRC_MAX_MESSAGE_BYTES, DEFAULT_IRC_PORT, DEFAULT_IRC_TIMEOUT_MS,
};
use talon_egress::{EgressError, EgressGuard, SsrfPolicy, SystemResolver};
use talon_tool_catalog::CancellationToken;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::broadcast;

use crate::action::MessageAction;
use crate::channel::{ActionRequest, Channel, ChannelCapabilities};
use crate::error::{ChannelError, Result};
use crate::webhook::now_ms;
use line::{IrcMessage, MAX_LINE_BYTES, parse_ctcp, parse_line, privmsg_lines};

/// The id of the IRC channel.
pub const IRC_CHANNEL_ID: &str = "irc";

/// What the IRC channel offers.
const IRC_ACTIONS: &[MessageAction] = &[
    MessageAction::Send,
    MessageAction::Reply,
    MessageAction::Read,
    MessageAction::React,
];

/// The most text bytes in one PRIVMSG line (the server adds our prefix,
/// and a line is at most 512 bytes).
const CHUNK_BYTES: usize = 380;
/// `read`'s default `limit`.
const DEFAULT_READ_LIMIT: usize = 20;

/// One message seen or sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IrcEntry {
    /// Talon's id for it.
    pub id: String,
    /// The author's nick.
    pub from: String,
    /// The channel, or the nick of a private conversation.
    pub target: String,
    /// The text (a CTCP ACTION without its markers).
    pub text: String,
    /// `message`, `action` or `notice`.
    pub kind: &'static str,
    /// When it was seen or sent (ms since the epoch).
    pub at_ms: u64,
}

/// Messages per target (lowercased), newest last.
#[derive(Debug)]
struct History {
    entries: Mutex<HashMap<String, VecDeque<IrcEntry>>>,
    limit: usize,
    next: AtomicU64,
    epoch: u64,
}

impl History {
    fn next_id(&self) -> String {
        format!(
            "{:x}-{}",
            self.epoch,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    fn push(&self, from: &str, target: &str, text: &str, kind: &'static str) -> IrcEntry {
        let entry = IrcEntry {
            id: self.next_id(),
            from: from.to_owned(),
            target: target.to_owned(),
            text: text.to_owned(),
            kind,
            at_ms: now_ms(),
        };
        let mut all = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let list = all.entry(target.to_lowercase()).or_default();
        list.push_back(entry.clone());
        while list.len() > self.limit {
            list.pop_front();
        }
        entry
    }

    fn find(&self, id: &str) -> Option<IrcEntry> {
        let all = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        all.values().flatten().find(|e| e.id == id).cloned()
    }

    fn recent(&self, target: &str, limit: usize) -> Vec<IrcEntry> {
        let all = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        all.get(&target.to_lowercase())
            .map(|l| l.iter().rev().take(limit).rev().cloned().collect())
            .unwrap_or_default()
    }
}

/// One open connection.
#[derive(Debug)]
struct Conn {
    writer: Arc<tokio::sync::Mutex<OwnedWriteHalf>>,
    events: broadcast::Sender<IrcMessage>,
    alive: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
    /// The nick the server accepted.
    nick: String,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The IRC channel.
pub struct IrcChannel {
    host: String,
    port: u16,
    nick: String,
    username: String,
    realname: String,
    password: Option<String>,
    channels: Vec<String>,
    timeout: Duration,
    guard: EgressGuard,
    caps: ChannelCapabilities,
    history: Arc<History>,
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
}

impl std::fmt::Debug for IrcChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        f.debug_struct("IrcChannel")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("nick", &self.nick)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl IrcChannel {
    /// The channel for `config`; `password` is `config.password` with
    /// `${secret:NAME}` already expanded. Nothing connects until the
    /// first action.
    pub fn new(config: &IrcChannelConfig, password: Option<String>) -> Result<Self> {
        Self::with_resolver(config, password, Arc::new(SystemResolver))
    }

    /// [`Self::new`] with a given name resolver (tests).
    pub fn with_resolver(
        config: &IrcChannelConfig,
        password: Option<String>,
        resolver: Arc<dyn talon_egress::HostResolver>,
    ) -> Result<Self> {
        let bad = |key: &str, message: String| ChannelError::Config {
            key: format!("channels.irc.{key}"),
            message,
        };
        if config.tls == Some(true) {
            return Err(bad(
                "tls",
                "TLS is not supported by this version of the IRC channel; it is refused rather than connecting in plain text (use a server reachable without TLS on a trusted network, or a local TLS tunnel, and set tls: false)".to_owned(),
            ));
        }
        let word = |key: &str, v: &str| -> Result<()> {
            if v.is_empty() || v.chars().any(|c| c == ' ' || c.is_control()) {
                return Err(bad(
                    key,
                    format!("`{v}` must be one word without control characters"),
                ));
            }
            Ok(())
        };
        word("host", &config.host)?;
        word("nick", &config.nick)?;
        let username = config
            .username
            .clone()
            .unwrap_or_else(|| config.nick.clone());
        word("username", &username)?;
        let realname = config
            .realname
            .clone()
            .unwrap_or_else(|| config.nick.clone());
        if realname.chars().any(char::is_control) {
            return Err(bad(
                "realname",
                "must not contain control characters".to_owned(),
            ));
        }
        if let Some(p) = &password
            && (p.is_empty() || p.chars().any(|c| c == ' ' || c.is_control()))
        {
            return Err(bad(
                "password",
                "must be one word without spaces or control characters".to_owned(),
            ));
        }
        let channels = config.channels.clone().unwrap_or_default();
        for (i, c) in channels.iter().enumerate() {
            if !c.starts_with(['#', '&']) || line::check_target(c).is_err() {
                return Err(bad(
                    &format!("channels[{i}]"),
                    format!("`{c}` is not an IRC channel name (`#name`, no spaces or commas)"),
                ));
            }
        }
        let timeout_ms = config.timeout_ms.unwrap_or(DEFAULT_IRC_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(bad("timeoutMs", "must be at least 1".to_owned()));
        }
        let policy = match &config.ssrf_allowlist {
            Some(allow) => SsrfPolicy::from_config_at(allow, "channels.irc.ssrfAllowlist")
                .map_err(|e| bad("ssrfAllowlist", e.message))?,
            None => SsrfPolicy::strict(),
        };
        let guard = EgressGuard::new(Arc::new(policy), resolver)
            .with_opt_in("add the server's host or CIDR to channels.irc.ssrfAllowlist");
        Ok(IrcChannel {
            host: config.host.clone(),
            port: config.port.unwrap_or(DEFAULT_IRC_PORT),
            nick: config.nick.clone(),
            username,
            realname,
            password,
            channels,
            timeout: Duration::from_millis(timeout_ms),
            guard,
            caps: ChannelCapabilities::new(
                IRC_ACTIONS,
                config
                    .max_message_bytes
                    .unwrap_or(DEFAULT_IRC_MAX_MESSAGE_BYTES),
            ),
            history: Arc::new(History {
                entries: Mutex::new(HashMap::new()),
                limit: config.history.unwrap_or(DEFAULT_IRC_HISTORY).max(1),
                next: AtomicU64::new(1),
                epoch: now_ms(),
            }),
            conn: tokio::sync::Mutex::new(None),
        })
    }

    fn unavailable(&self, message: impl Into<String>) -> ChannelError {
        ChannelError::Unavailable {
            channel: IRC_CHANNEL_ID.to_owned(),
            message: format!("{}:{}: {}", self.host, self.port, message.into()),
        }
    }

    fn timed_out(&self, what: &'static str) -> ChannelError {
        ChannelError::Timeout {
            channel: IRC_CHANNEL_ID.to_owned(),
            ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            what,
        }
    }

    /// The live connection, opened (and registered) when there is none.
    async fn connection(&self) -> Result<Arc<Conn>> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref()
            && c.alive.load(Ordering::SeqCst)
        {
            return Ok(Arc::clone(c));
        }
        *slot = None;
        let conn = Arc::new(self.open().await?);
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }

    async fn open(&self) -> Result<Conn> {
        // The server's address is vetted as `http://host:port/` would be:
        // the same rules as every other outbound connection.
        let host = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let url = url::Url::parse(&format!("http://{host}:{}/", self.port)).map_err(|e| {
            ChannelError::Config {
                key: "channels.irc.host".to_owned(),
                message: format!("`{}` is not a host name: {e}", self.host),
            }
        })?;
        let dest = self.guard.destination(&url).await.map_err(|e| match e {
            EgressError::Blocked(b) => ChannelError::Blocked(b),
            other => self.unavailable(other.to_string()),
        })?;
        let mut stream = None;
        let mut last = String::from("no address");
        for ip in &dest.addrs {
            let addr = SocketAddr::new(*ip, self.port);
            match tokio::time::timeout(self.timeout, TcpStream::connect(addr)).await {
                Ok(Ok(s)) => {
                    stream = Some(s);
                    break;
                }
                Ok(Err(e)) => last = format!("{addr}: {e}"),
                Err(_) => return Err(self.timed_out("the TCP connection")),
            }
        }
        let stream = stream.ok_or_else(|| self.unavailable(format!("cannot connect ({last})")))?;
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let (events, _) = broadcast::channel(256);
        let alive = Arc::new(AtomicBool::new(true));
        let writer = Arc::new(tokio::sync::Mutex::new(write));
        let mut rx = events.subscribe();
        let reader = tokio::spawn(read_loop(
            BufReader::new(read),
            Arc::clone(&writer),
            events.clone(),
            Arc::clone(&alive),
            Arc::clone(&self.history),
            self.nick.clone(),
        ));
        let conn = Conn {
            writer,
            events,
            alive,
            reader,
            nick: self.nick.clone(),
        };
        let mut hello = Vec::new();
        if let Some(p) = &self.password {
            hello.push(format!("PASS {p}"));
        }
        hello.push(format!("NICK {}", self.nick));
        hello.push(format!("USER {} 0 * :{}", self.username, self.realname));
        self.write(&conn, &hello).await?;
        self.wait(&mut rx, "registration", |m| match m.command.as_str() {
            "001" => Some(Answer::Done),
            "ERROR" => Some(Answer::Refused(format!(
                "the server closed the link: {}",
                m.params.last().cloned().unwrap_or_default()
            ))),
            _ if m.is_error_numeric() => Some(Answer::Refused(describe(m))),
            _ => None,
        })
        .await?;
        for channel in &self.channels {
            self.write(&conn, &[format!("JOIN {channel}")]).await?;
            let lower = channel.to_lowercase();
            self.wait(&mut rx, "joining a channel", |m| match m.command.as_str() {
                // End of NAMES: the join is complete.
                "366" if m.param(1).is_some_and(|c| c.to_lowercase() == lower) => {
                    Some(Answer::Done)
                }
                _ if m.is_error_numeric() => Some(Answer::Refused(describe(m))),
                _ => None,
            })
            .await?;
        }
        Ok(conn)
    }

    async fn write(&self, conn: &Conn, lines: &[String]) -> Result<()> {
        let mut out = String::new();
        for l in lines {
            out.push_str(l);
            out.push_str("\r\n");
        }
        let mut w = conn.writer.lock().await;
        match tokio::time::timeout(self.timeout, w.write_all(out.as_bytes())).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                conn.alive.store(false, Ordering::SeqCst);
                Err(self.unavailable(format!("write failed: {e}")))
            }
            Err(_) => Err(self.timed_out("writing to the server")),
        }
    }

    /// Wait for the first event `decide` answers, within the timeout;
    /// a refusal is the channel's `Rejected` error, prefixed with `what`.
    async fn wait(
        &self,
        rx: &mut broadcast::Receiver<IrcMessage>,
        what: &'static str,
        mut decide: impl FnMut(&IrcMessage) -> Option<Answer>,
    ) -> Result<()> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let next = tokio::time::timeout_at(deadline, rx.recv()).await;
            match next {
                Err(_) => return Err(self.timed_out(what)),
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    return Err(self.unavailable(format!("the connection closed during {what}")));
                }
                Ok(Ok(m)) => match decide(&m) {
                    None => continue,
                    Some(Answer::Done) => return Ok(()),
                    Some(Answer::Refused(why)) => {
                        return Err(ChannelError::Rejected {
                            channel: IRC_CHANNEL_ID.to_owned(),
                            message: format!("{what}: {why}"),
                        });
                    }
                },
            }
        }
    }

    /// Send `lines`, then a PING, and wait for its PONG (an error numeric
    /// before it refuses the send).
    async fn exchange(&self, conn: &Conn, mut lines: Vec<String>) -> Result<()> {
        let mut rx = conn.events.subscribe();
        let token = format!("talon-{}", self.history.next_id());
        lines.push(format!("PING :{token}"));
        self.write(conn, &lines).await?;
        // From here the lines are out: a lost connection may have
        // delivered them.
        let confirmed = self
            .wait(&mut rx, "the server's confirmation", |m| {
                if m.command == "PONG" && m.params.last().is_some_and(|p| *p == token) {
                    Some(Answer::Done)
                } else if m.is_error_numeric() {
                    Some(Answer::Refused(describe(m)))
                } else {
                    None
                }
            })
            .await;
        match confirmed {
            Err(ChannelError::Unavailable { channel, message }) => {
                Err(ChannelError::LostAfterSend { channel, message })
            }
            other => other,
        }
    }

    fn default_target(&self, request: &ActionRequest) -> Result<String> {
        request
            .target
            .clone()
            .or_else(|| self.channels.first().cloned())
            .ok_or(ChannelError::Input {
                param: "target",
                message: "target required: a `#channel` or a nick (channels.irc.channels names no default)".to_owned(),
            })
    }

    fn entry(&self, id: Option<&String>, param: &'static str) -> Result<IrcEntry> {
        let id = id.ok_or(ChannelError::Input {
            param,
            message: format!("{param} required: a message id from `read`"),
        })?;
        self.history.find(id).ok_or_else(|| ChannelError::Input {
            param,
            message: format!(
                "no IRC message `{id}` is known (ids come from `read` and from sends since the gateway started)"
            ),
        })
    }

    async fn say(&self, target: &str, text: &str, kind: &'static str) -> Result<IrcEntry> {
        let body = if kind == "action" {
            format!("\u{1}ACTION {text}\u{1}")
        } else {
            text.to_owned()
        };
        let lines = privmsg_lines(target, &body, CHUNK_BYTES).map_err(|e| ChannelError::Input {
            param: if matches!(e, line::OutError::BadTarget) {
                "target"
            } else {
                "message"
            },
            message: e.to_string(),
        })?;
        let conn = self.connection().await?;
        self.exchange(&conn, lines).await?;
        Ok(self.history.push(&conn.nick, target, text, kind))
    }
}

/// A numeric or `ERROR` line, for an error message.
fn describe(m: &IrcMessage) -> String {
    let text = m
        .params
        .iter()
        .skip(1)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{} {}",
        m.command,
        text.chars().take(300).collect::<String>()
    )
}

/// Read lines until the connection ends: answer PINGs, keep messages,
/// hand every parsed line to the waiting senders.
async fn read_loop(
    mut reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: Arc<tokio::sync::Mutex<OwnedWriteHalf>>,
    events: broadcast::Sender<IrcMessage>,
    alive: Arc<AtomicBool>,
    history: Arc<History>,
    nick: String,
) {
    let mut buf = Vec::with_capacity(1024);
    let limit = u64::try_from(MAX_LINE_BYTES + 2).unwrap_or(u64::MAX);
    loop {
        buf.clear();
        let n = match (&mut reader).take(limit).read_until(b'\n', &mut buf).await {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(target: "talon::channels", error = %e, "irc: read failed");
                break;
            }
        };
        if n == 0 {
            break;
        }
        if buf.last() != Some(&b'\n') {
            tracing::warn!(target: "talon::channels", "irc: the server sent a line over {MAX_LINE_BYTES} bytes; closing the connection");
            break;
        }
        let text = String::from_utf8_lossy(&buf);
        let msg = match parse_line(&text) {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(target: "talon::channels", error = %e, "irc: unparsable line ignored");
                continue;
            }
        };
        if msg.command == "PING" {
            let token = msg.params.last().cloned().unwrap_or_default();
            let mut w = writer.lock().await;
            if w.write_all(format!("PONG :{token}\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
            continue;
        }
        if matches!(msg.command.as_str(), "PRIVMSG" | "NOTICE")
            && let (Some(from), Some(to), Some(body)) = (msg.nick(), msg.param(0), msg.param(1))
        {
            // A private message is kept under the sender's nick.
            let target = if to.eq_ignore_ascii_case(&nick) {
                from
            } else {
                to
            };
            let (kind, body) = match parse_ctcp(body) {
                Some(("ACTION", rest)) => ("action", rest),
                Some(_) => ("ctcp", body),
                None if msg.command == "NOTICE" => ("notice", body),
                None => ("message", body),
            };
            if kind != "ctcp" {
                history.push(from, target, body, kind);
            }
        }
        let _ = events.send(msg);
    }
    alive.store(false, Ordering::SeqCst);
}

#[async_trait::async_trait]
impl Channel for IrcChannel {
    fn id(&self) -> &str {
        IRC_CHANNEL_ID
    }

    fn capabilities(&self) -> &ChannelCapabilities {
        &self.caps
    }

    async fn perform(&self, request: &ActionRequest, abort: &CancellationToken) -> Result<Value> {
        let work = async {
            match request.action {
                MessageAction::Send => {
                    let target = self.default_target(request)?;
                    let text = required_text(request)?;
                    let sent = self.say(&target, text, "message").await?;
                    Ok(
                        json!({ "ok": true, "channel": IRC_CHANNEL_ID, "action": "send", "messageId": sent.id, "target": sent.target }),
                    )
                }
                MessageAction::Reply => {
                    let original = self.entry(
                        request.reply_to.as_ref().or(request.message_id.as_ref()),
                        "replyTo",
                    )?;
                    let target = request
                        .target
                        .clone()
                        .unwrap_or_else(|| original.target.clone());
                    let text = required_text(request)?;
                    let sent = self
                        .say(&target, &format!("{}: {text}", original.from), "message")
                        .await?;
                    Ok(
                        json!({ "ok": true, "channel": IRC_CHANNEL_ID, "action": "reply", "messageId": sent.id, "target": sent.target, "replyTo": original.id }),
                    )
                }
                MessageAction::React => {
                    let original = self.entry(request.message_id.as_ref(), "messageId")?;
                    let emoji = request
                        .emoji
                        .as_deref()
                        .filter(|e| !e.trim().is_empty())
                        .ok_or(ChannelError::Input {
                            param: "emoji",
                            message: "emoji required for react".to_owned(),
                        })?;
                    let snippet: String = original.text.chars().take(60).collect();
                    let text = format!("reacted {emoji} to {}: \"{snippet}\"", original.from);
                    let sent = self.say(&original.target, &text, "action").await?;
                    Ok(
                        json!({ "ok": true, "channel": IRC_CHANNEL_ID, "action": "react", "messageId": sent.id, "target": sent.target, "reactedTo": original.id, "as": "ctcp-action" }),
                    )
                }
                MessageAction::Read => {
                    let target = self.default_target(request)?;
                    // Connected, so messages to the joined channels arrive.
                    self.connection().await?;
                    let limit = request.limit.unwrap_or(DEFAULT_READ_LIMIT).max(1);
                    let messages = self.history.recent(&target, limit);
                    Ok(
                        json!({ "ok": true, "channel": IRC_CHANNEL_ID, "action": "read", "target": target, "messages": messages }),
                    )
                }
                other => Err(ChannelError::UnsupportedAction {
                    channel: IRC_CHANNEL_ID.to_owned(),
                    action: other.as_str(),
                    offered: self.caps.actions.iter().map(|a| a.as_str()).collect(),
                }),
            }
        };
        tokio::select! {
            r = work => r,
            () = abort.cancelled() => Err(ChannelError::Aborted),
        }
    }
}

fn required_text(request: &ActionRequest) -> Result<&str> {
    request
        .message
        .as_deref()
        .filter(|m| !m.is_empty())
        .ok_or(ChannelError::Input {
            param: "message",
            message: format!("message required for {}", request.action),
        })
}

/// What a server line means to `IrcChannel::wait`: the awaited
/// event, or the server's refusal (its text, shown in the error).
enum Answer {
    Done,
    Refused(String),
}
