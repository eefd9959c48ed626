//! The client side's notification handler: counts `tools/list_changed`
//! and wakes the server's re-list task.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{MaybeSendFuture, NotificationContext, RoleClient};
use tokio::sync::Notify;

/// Shared between the rmcp service (which calls the handler) and the
/// re-list task.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientEvents {
    changes: Arc<AtomicU64>,
    notify: Arc<Notify>,
}

impl ClientEvents {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// How many `tools/list_changed` notifications arrived.
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// Woken on each notification (permits coalesce).
    pub(crate) fn notify(&self) -> &Notify {
        &self.notify
    }
}

impl ClientHandler for ClientEvents {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_one();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("talon", env!("CARGO_PKG_VERSION")),
        )
    }
}
