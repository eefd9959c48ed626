use crate::DockerBackend;
use talon_sandbox_core::SandboxError;

#[tokio::test]
async fn an_engine_that_does_not_answer_names_both_ways_to_keep_sandboxing() {
    let err = DockerBackend::connect_unix("/nonexistent/talon-test-docker.sock")
        .await
        .unwrap_err();
    let SandboxError::EngineUnavailable(text) = &err else {
        panic!("expected EngineUnavailable, got {err:?}");
    };
    assert!(text.contains("start the Docker engine"), "{text}");
    assert!(
        text.contains("agents.defaults.sandbox.backend to \"local\""),
        "{text}"
    );
}
