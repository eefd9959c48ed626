#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

#[tokio::test]
async fn a_lease_refuses_removal_until_released() {
    let activity = SandboxActivity::new();
    let key = SandboxKey::new("Docker", "talon-sbx-a");
    let lease = activity.lease(&key).await;
    let second = activity.lease(&key).await;
    assert_eq!(activity.in_flight(&key), 2);
    assert_eq!(activity.busy(), vec![key.clone()]);
    assert!(activity.begin_removal(&key).is_none());
    drop(lease);
    assert!(activity.begin_removal(&key).is_none(), "one still held");
    drop(second);
    assert_eq!(activity.in_flight(&key), 0);
    let guard = activity.begin_removal(&key).expect("nothing in flight");
    assert!(
        activity.begin_removal(&key).is_none(),
        "one removal at a time"
    );
    assert_eq!(activity.generation(&key), 0);
    drop(guard);
    assert_eq!(activity.generation(&key), 1);
}

#[tokio::test]
async fn a_lease_waits_while_the_sandbox_is_removed() {
    let activity = SandboxActivity::new();
    let key = SandboxKey::new("docker", "talon-sbx-b");
    let guard = activity.begin_removal(&key).unwrap();
    let waiter = {
        let activity = Arc::clone(&activity);
        let key = key.clone();
        tokio::spawn(async move { activity.lease(&key).await.generation() })
    };
    // The lease cannot be taken while the guard is held.
    let early = tokio::time::timeout(Duration::from_millis(100), async {
        while activity.in_flight(&key) == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(early.is_err(), "a lease was taken during removal");
    drop(guard);
    let generation = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the lease is taken once the removal ends")
        .unwrap();
    assert_eq!(generation, 1, "the lease sees the new generation");
}

#[test]
fn keys_normalise_the_backend_id() {
    assert_eq!(SandboxKey::new(" SSH ", "x"), SandboxKey::new("ssh", "x"));
}
