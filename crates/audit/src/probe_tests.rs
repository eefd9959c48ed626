use super::*;

#[test]
fn a_client_frame_reads_back_as_its_payload() {
    for len in [0usize, 5, 125, 126, 300, 70_000] {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let frame = client_text_frame(&payload);
        // Masked, so the bytes on the wire are not the payload.
        assert_eq!(frame[0], 0x81);
        assert_ne!(frame[1] & 0x80, 0);
        let (fin, opcode, back) = read_frame(&mut frame.as_slice()).unwrap();
        assert!(fin);
        assert_eq!(opcode, 1);
        assert_eq!(back, payload, "len {len}");
    }
}

#[test]
fn an_oversized_frame_is_refused_before_it_is_read() {
    let mut frame = vec![0x81, 127];
    frame.extend_from_slice(&(MAX_ANSWER_BYTES + 1).to_be_bytes());
    let err = read_frame(&mut frame.as_slice()).unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");
}

#[test]
fn status_lines_parse() {
    assert_eq!(status_of("HTTP/1.1 401 Unauthorized\r\n"), Some(401));
    assert_eq!(status_of("HTTP/1.0 200 OK"), Some(200));
    assert_eq!(status_of("SSH-2.0-OpenSSH"), None);
}

#[test]
fn a_closed_port_is_an_info_finding() {
    // Bind then drop: nothing listens on the port any more.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut out = Findings::default();
    let mut probe = GatewayProbe::new(addr);
    probe.timeout = Duration::from_millis(500);
    check(&probe, &mut out);
    let f = out.as_slice();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].check_id, "talon.gateway.probe");
    assert_eq!(f[0].severity, AuditSeverity::Info);
    assert!(f[0].title.contains("no gateway answers"), "{}", f[0].title);
}

#[test]
fn the_token_is_not_in_debug_output() {
    let mut probe = GatewayProbe::new("127.0.0.1:1".parse().unwrap());
    probe.token = Some("super-secret-token-value".to_owned());
    assert!(!format!("{probe:?}").contains("super-secret"));
}
