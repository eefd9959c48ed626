use crate::DockerBackend;
use talon_sandbox_core::SandboxErrorKind;

#[tokio::test]
async fn an_engine_that_does_not_answer_names_both_ways_to_keep_sandboxing() {
    let err = DockerBackend::connect_unix("/nonexistent/talon-test-docker.sock")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), SandboxErrorKind::EngineUnavailable, "{err:?}");
    let text = err.message();
    assert!(text.contains("start the Docker engine"), "{text}");
    assert!(
        text.contains("agents.defaults.sandbox.backend to \"local\""),
        "{text}"
    );
}

#[test]
fn an_engine_refusal_keeps_its_text_and_the_bollard_error_as_source() {
    let err = super::engine_error(
        "unix:///run/docker.sock",
        "create container talon-sbx-x",
        bollard::errors::Error::DockerResponseServerError {
            status_code: 500,
            message: "no space left\n".into(),
        },
    );
    assert_eq!(err.kind(), SandboxErrorKind::Io);
    assert_eq!(
        err.to_string(),
        "sandbox I/O error: the Docker engine refused to create container talon-sbx-x (HTTP 500): no space left"
    );
    let source = std::error::Error::source(&err).expect("the bollard error");
    assert!(matches!(
        source.downcast_ref::<bollard::errors::Error>(),
        Some(bollard::errors::Error::DockerResponseServerError {
            status_code: 500,
            ..
        })
    ));
}
