//! How a request carries its credentials and names its session: the one
//! bearer-token parser and the one session-key parser, used by every
//! surface (WebSocket, HTTP, `/mcp`) and by clients.

/// The header naming the session on `/mcp` and `POST /tools/invoke`
/// clients (lowercase, as HTTP/2 sends it).
pub const SESSION_HEADER: &str = "x-talon-session";

/// The query parameter naming the session (`/mcp?session=…`).
pub const SESSION_QUERY_PARAM: &str = "session";

/// The `Authorization` header value for `token`.
pub fn authorization_header(token: &str) -> String {
    format!("Bearer {}", token.trim())
}

/// The bearer token of an `Authorization` header value: scheme matched
/// case-insensitively, blanks around the token trimmed, an empty token is
/// none.
pub fn bearer_token(header: Option<&str>) -> Option<&str> {
    let (scheme, token) = header?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The session a request names: the [`SESSION_HEADER`] header (trimmed),
/// else the [`SESSION_QUERY_PARAM`] query parameter (percent-decoded);
/// `None` when neither names one.
pub fn session_key(header: Option<&str>, query: Option<&str>) -> Option<String> {
    if let Some(v) = header.map(str::trim).filter(|v| !v.is_empty()) {
        return Some(v.to_owned());
    }
    query?
        .split('&')
        .find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == SESSION_QUERY_PARAM).then(|| percent_decode(v))
        })
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// `application/x-www-form-urlencoded` decoding (`%XX` and `+`); a bad
/// escape is kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(decoded) => {
                        out.push(decoded);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
