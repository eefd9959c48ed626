//! A job's webhook target passes the egress guard: private and loopback
//! addresses need `cron.webhookSsrfAllowlist`, metadata endpoints are
//! refused whatever it says, and a target refused later (the allowlist
//! narrowed) is never handed to the runner.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use talon_cron::*;
use talon_egress::{BlockKind, SsrfAllowlistConfig};

use super::common::*;

fn webhook_job(name: &str, to: &str) -> JobSpec {
    JobSpec {
        delivery: Some(Delivery {
            mode: DeliveryMode::Webhook,
            channel: None,
            to: Some(to.into()),
            thread_id: None,
            account_id: None,
            best_effort: false,
        }),
        ..agent_turn(name, every(3_600_000))
    }
}

fn open(dir: &std::path::Path, runner: Arc<Scripted>, webhooks: WebhookGuard) -> CronService {
    let opts = CronOptions {
        clock: Arc::new(TokioClock::new(T0)),
        quotas: CronQuotas::unlimited(),
        webhooks,
        ..CronOptions::default()
    };
    CronService::open(&dir.join("talon.db"), runner, opts).unwrap()
}

fn allow(hosts: &[&str], cidrs: &[&str]) -> WebhookGuard {
    WebhookGuard::from_config(Some(&SsrfAllowlistConfig {
        hosts: hosts.iter().map(|s| (*s).to_owned()).collect(),
        cidrs: cidrs.iter().map(|s| (*s).to_owned()).collect(),
    }))
}

fn refusal(err: &CronError) -> (&str, BlockKind, Option<&str>) {
    match err {
        CronError::Egress { field, blocked } => {
            (field.as_str(), blocked.kind, blocked.fix.as_deref())
        }
        other => panic!("expected an egress refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn private_and_metadata_targets_are_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let svc = open(dir.path(), Scripted::new([]), WebhookGuard::default());
    for to in [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.0.0.7/hook",
        "http://[::1]/hook",
        "http://0x7f.1/hook",
        "http://svc.internal/hook",
    ] {
        let err = svc.add(webhook_job("w", to), &operator()).unwrap_err();
        let (field, kind, fix) = refusal(&err);
        assert_eq!(field, "delivery.to", "{to}");
        assert_ne!(kind, BlockKind::Metadata, "{to}");
        if kind == BlockKind::Private {
            assert!(
                fix.is_some_and(|f| f.contains("cron.webhookSsrfAllowlist")),
                "{to}: {err}"
            );
        }
    }
    for to in [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://100.100.100.200/",
    ] {
        let err = svc.add(webhook_job("m", to), &operator()).unwrap_err();
        assert_eq!(refusal(&err).1, BlockKind::Metadata, "{to}: {err}");
    }
    let err = svc
        .add(webhook_job("f", "file:///etc/passwd"), &operator())
        .unwrap_err();
    assert!(err.to_string().contains("http"), "{err}");
    assert!(svc.list(true).unwrap().is_empty());
}

#[tokio::test]
async fn the_allowlist_opens_private_targets_but_never_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let guard = allow(
        &["hooks.internal", "metadata.google.internal"],
        &["127.0.0.0/8", "169.254.0.0/16"],
    );
    let svc = open(dir.path(), Scripted::new([]), guard);
    svc.add(webhook_job("a", "http://127.0.0.1:9/hook"), &operator())
        .unwrap();
    svc.add(webhook_job("b", "https://hooks.internal/x"), &operator())
        .unwrap();
    svc.add(webhook_job("c", "https://example.com/x"), &operator())
        .unwrap();
    for to in [
        "http://169.254.169.254/",
        "http://metadata.google.internal/",
    ] {
        let err = svc.add(webhook_job("m", to), &operator()).unwrap_err();
        assert_eq!(refusal(&err).1, BlockKind::Metadata, "{to}: {err}");
    }
    assert_eq!(svc.list(true).unwrap().len(), 3);
}

#[tokio::test]
async fn an_update_to_a_private_target_is_refused_and_the_job_kept() {
    let dir = tempfile::tempdir().unwrap();
    let svc = open(dir.path(), Scripted::new([]), WebhookGuard::default());
    let job = svc
        .add(webhook_job("w", "https://example.com/hook"), &operator())
        .unwrap()
        .job;
    let patch = JobPatch {
        delivery: webhook_job("w", "http://192.168.1.1/hook").delivery,
        ..JobPatch::default()
    };
    let err = svc.update(&job.id, patch, &operator()).unwrap_err();
    assert_eq!(refusal(&err).0, "patch.delivery.to");
    let kept = svc.get(&job.id).unwrap().unwrap();
    assert_eq!(
        kept.delivery.and_then(|d| d.to).as_deref(),
        Some("https://example.com/hook")
    );
}

/// A job stored while the allowlist opened its target runs after the
/// allowlist was removed: the run goes on, but the runner is given no
/// delivery to the now-refused address.
#[tokio::test(start_paused = true)]
async fn a_target_refused_since_it_was_stored_is_not_handed_to_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let svc = open(dir.path(), Scripted::new([]), allow(&[], &["127.0.0.0/8"]));
        svc.add(webhook_job("w", "http://127.0.0.1:9/hook"), &operator())
            .unwrap()
            .job
            .id
    };
    let runner = Scripted::new([Step::Ok]);
    let svc = open(dir.path(), runner.clone(), WebhookGuard::default());
    svc.start().unwrap();
    assert!(svc.run_now(&id, true).unwrap().ran);
    sleep_s(1).await;
    let calls = runner.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].delivery, None);
    svc.stop();
}

#[test]
fn a_broken_allowlist_refuses_webhooks_naming_its_key() {
    let guard = allow(&[], &["not-a-cidr"]);
    let d = webhook_job("w", "https://example.com/hook").delivery;
    let err = guard.vet(d.as_ref(), "delivery").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("cron.webhookSsrfAllowlist.cidrs"), "{text}");
    // A delivery that is not a webhook is not affected.
    guard.vet(None, "delivery").unwrap();
}
