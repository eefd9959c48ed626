#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn parses_requests_and_notifications() {
    let r = parse_request(json!({"jsonrpc":"2.0","id":7,"method":"health"})).unwrap();
    assert_eq!(r.id, Some(json!(7)));
    assert_eq!(r.params, json!({}));
    let n = parse_request(json!({"jsonrpc":"2.0","method":"x","params":[1]})).unwrap();
    assert_eq!(n.id, None);
    assert_eq!(n.params, json!([1]));
}

#[test]
fn rejects_malformed_requests_with_the_right_code() {
    let cases = [
        (json!([]), Value::Null),
        (json!({"id":1,"method":"x"}), json!(1)),
        (json!({"jsonrpc":"1.0","id":1,"method":"x"}), json!(1)),
        (json!({"jsonrpc":"2.0","id":2,"method":5}), json!(2)),
        (
            json!({"jsonrpc":"2.0","id":{"a":1},"method":"x"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc":"2.0","id":3,"method":"x","params":"s"}),
            json!(3),
        ),
    ];
    for (frame, id) in cases {
        let (got_id, err) = *parse_request(frame.clone()).unwrap_err();
        assert_eq!(err.code, INVALID_REQUEST, "{frame}");
        assert_eq!(got_id, id, "{frame}");
    }
}

#[test]
fn builds_frames() {
    let e = error_response(json!(1), &RpcError::params("bad").with_data(json!({"k":1})));
    assert_eq!(e["error"]["code"], json!(INVALID_PARAMS));
    assert_eq!(e["error"]["data"]["k"], json!(1));
    assert_eq!(notification("a.b", json!({}))["method"], json!("a.b"));
    assert_eq!(response(json!("x"), json!(true))["result"], json!(true));
}

#[test]
fn a_response_frame_reads_back_as_result_or_error() {
    let ok: ResponseFrame =
        serde_json::from_value(response(json!(1), json!({"ok": true}))).unwrap();
    assert_eq!(ok.into_result().unwrap(), json!({"ok": true}));
    let err: ResponseFrame = serde_json::from_value(error_response(
        json!(1),
        &RpcError::not_found("no session `x`"),
    ))
    .unwrap();
    let e = err.into_result().unwrap_err();
    assert_eq!(e.code, NOT_FOUND);
    assert_eq!(e.message, "no session `x`");
    assert_eq!(e.data, None);
}
