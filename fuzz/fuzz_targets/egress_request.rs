//! A proxy request head from inside a sandbox: parsed strictly, and an
//! accepted one checked by the strict SSRF rules. An accepted CONNECT
//! names one host and a non-zero port, with no credentials or path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_egress::{ProxyRequest, SsrfPolicy};

fuzz_target!(|head: &[u8]| {
    let Ok(request) = ProxyRequest::parse(head) else {
        return;
    };
    let url = request.url();
    assert!(url.host_str().is_some_and(|h| !h.is_empty()));
    assert!(url.username().is_empty() && url.password().is_none());
    if let ProxyRequest::Connect { url } = &request {
        assert!(url.port_or_known_default().is_some_and(|p| p != 0));
        assert_eq!(url.path(), "/");
    }
    let _ = SsrfPolicy::strict().check_url(url);
});
