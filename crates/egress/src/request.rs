//! The head of one proxy request, read strictly: `CONNECT host:port` or an
//! absolute-form `http://` request. Everything else is refused before any
//! name is resolved.

use url::Url;

/// The most header lines a request head may have.
const MAX_HEADERS: usize = 100;

/// What a client asked the proxy for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyRequest {
    /// `CONNECT host:port HTTP/1.x`: a tunnel (HTTPS, or any TCP).
    Connect {
        /// The destination, as an `https://host:port/` URL for the guard.
        url: Url,
    },
    /// `METHOD http://host[:port]/path HTTP/1.x`: one plain-HTTP request,
    /// forwarded in origin form.
    Forward {
        /// The destination URL (scheme `http`).
        url: Url,
        /// The head to send upstream: origin-form request line, the
        /// client's headers without hop-by-hop proxy headers, and
        /// `Connection: close`.
        upstream_head: Vec<u8>,
    },
}

impl ProxyRequest {
    /// Parse a request head (everything before the blank line, without
    /// it), strictly; see the module docs of [`crate::EgressProxy`].
    pub fn parse(head: &[u8]) -> Result<ProxyRequest, BadRequest> {
        parse_head(head)
    }

    /// The URL the guard checks.
    pub fn url(&self) -> &Url {
        match self {
            ProxyRequest::Connect { url } | ProxyRequest::Forward { url, .. } => url,
        }
    }
}

/// Why a request head was refused (answered `400`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad proxy request: {0}")]
pub struct BadRequest(pub(crate) &'static str);

/// Parse a request head (everything before the blank line, without it).
pub(crate) fn parse_head(head: &[u8]) -> Result<ProxyRequest, BadRequest> {
    let text = std::str::from_utf8(head).map_err(|_| BadRequest("the head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    if request_line.bytes().any(|b| b.is_ascii_control()) {
        return Err(BadRequest("the request line holds a control character"));
    }
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest(
            "the request line is not `METHOD TARGET VERSION`",
        ));
    };
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(BadRequest("only HTTP/1.0 and HTTP/1.1 are proxied"));
    }
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(BadRequest("the method is not an HTTP token"));
    }
    let headers = parse_headers(lines)?;
    if method == "CONNECT" {
        return Ok(ProxyRequest::Connect {
            url: connect_url(target)?,
        });
    }
    // The authority must be written right after `http://` (no extra
    // slashes the URL parser would quietly skip).
    let written_authority = target
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
        && !target[7..].starts_with(['/', '\\']);
    let url = Url::parse(target).map_err(|_| BadRequest("the target is not an absolute URL"))?;
    if url.scheme() != "http" || !written_authority {
        return Err(BadRequest(
            "only absolute `http://` targets are forwarded; use CONNECT for https",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(BadRequest("the target URL has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(BadRequest("the target URL carries credentials (user@host)"));
    }
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    let mut upstream_head = format!("{method} {path} {version}\r\n").into_bytes();
    for (name, value) in headers {
        let hop_by_hop = [
            "proxy-authorization",
            "proxy-connection",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h));
        if !hop_by_hop {
            upstream_head.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
    }
    upstream_head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(ProxyRequest::Forward { url, upstream_head })
}

/// `host:port` (a name, a dotted IPv4 or a bracketed IPv6; the port
/// required) as `https://host:port/`. Anything that could smuggle a path,
/// credentials or a second authority is refused.
fn connect_url(authority: &str) -> Result<Url, BadRequest> {
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or(BadRequest("CONNECT needs `host:port`"))?;
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BadRequest("the CONNECT port is not a number"));
    }
    let port: u16 = port
        .parse()
        .map_err(|_| BadRequest("the CONNECT port is out of range"))?;
    if port == 0 {
        return Err(BadRequest("the CONNECT port is 0"));
    }
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => {
            !v6.is_empty()
                && v6
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        }
        None => {
            !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        }
    };
    if !host_ok {
        return Err(BadRequest(
            "the CONNECT host is not a host name or IP address",
        ));
    }
    let url = Url::parse(&format!("https://{host}:{port}/"))
        .map_err(|_| BadRequest("the CONNECT host is not a host name or IP address"))?;
    // `Url` drops the default port; keep the one asked for.
    if url.port_or_known_default() != Some(port) {
        return Err(BadRequest("the CONNECT port is not a number"));
    }
    Ok(url)
}

fn parse_headers<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> Result<Vec<(&'a str, &'a str)>, BadRequest> {
    let mut out = Vec::new();
    for line in lines {
        if out.len() == MAX_HEADERS {
            return Err(BadRequest("too many header lines"));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or(BadRequest("a header line has no `:`"))?;
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(BadRequest("a header name is not an HTTP token"));
        }
        let value = value.trim_matches([' ', '\t']);
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(BadRequest("a header value holds a control character"));
        }
        out.push((name, value));
    }
    Ok(out)
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
