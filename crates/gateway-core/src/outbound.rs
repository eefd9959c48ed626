//! One connection's bounded outbound queue. A client that does not read
//! fills it; the next frame that does not fit closes the connection (the
//! slow consumer is dropped, never the daemon).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Notify, mpsc};

/// The sending side of a connection.
#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    pub(crate) id: u64,
    tx: mpsc::Sender<String>,
    closed: Arc<(AtomicBool, Notify)>,
}

impl Outbound {
    pub(crate) fn new(id: u64, capacity: usize) -> (Outbound, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            Outbound {
                id,
                tx,
                closed: Arc::new((AtomicBool::new(false), Notify::new())),
            },
            rx,
        )
    }

    /// Queue a frame. `false` when the connection is closed, or was just
    /// closed because its queue is full.
    pub(crate) fn send(&self, frame: String) -> bool {
        if self.is_closed() {
            return false;
        }
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.close();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.close();
                false
            }
        }
    }

    /// Whether the queue is full right now (used to tell a slow consumer
    /// from a closed one).
    pub(crate) fn is_full(&self) -> bool {
        self.tx.capacity() == 0
    }

    pub(crate) fn close(&self) {
        if !self.closed.0.swap(true, Ordering::SeqCst) {
            self.closed.1.notify_waiters();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.0.load(Ordering::SeqCst)
    }

    /// Resolves once the connection is closed.
    pub(crate) async fn closed(&self) {
        loop {
            let n = self.closed.1.notified();
            if self.is_closed() {
                return;
            }
            n.await;
        }
    }
}
