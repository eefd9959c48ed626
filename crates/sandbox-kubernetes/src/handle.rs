//! [`KubernetesSandbox`]: one ready claim's pod.

use std::sync::Arc;
use std::time::Duration;

use talon_fs_bridge::FsBridge;
use talon_sandbox_core::{
    LaunchRequest, LaunchedProcess, ProcessLauncher, SandboxError, SandboxHandle, ScriptOutput,
    script_argv,
};

use crate::cluster::ClusterApi;
use crate::error::KubernetesError;

/// One claim's pod: scripts run through the cluster's exec; there is no
/// streaming launcher and no file bridge yet.
#[derive(Debug)]
pub struct KubernetesSandbox {
    api: Arc<dyn ClusterApi>,
    namespace: String,
    name: String,
    pod: String,
    workdir: String,
    launcher: Arc<PodLauncher>,
}

impl KubernetesSandbox {
    pub(crate) fn new(
        api: Arc<dyn ClusterApi>,
        namespace: String,
        name: String,
        pod: String,
        workdir: String,
    ) -> Self {
        KubernetesSandbox {
            api,
            namespace,
            launcher: Arc::new(PodLauncher { pod: pod.clone() }),
            name,
            pod,
            workdir,
        }
    }

    /// The pod the claim is bound to.
    pub fn pod(&self) -> &str {
        &self.pod
    }
}

/// The `exec` tool's launcher: refuses every launch, naming why (the
/// streaming `pods/exec` launcher with the pid wrapper is not written).
#[derive(Debug)]
pub struct PodLauncher {
    pod: String,
}

#[async_trait::async_trait]
impl ProcessLauncher for PodLauncher {
    fn id(&self) -> &str {
        "kubernetes"
    }

    async fn launch(&self, _request: LaunchRequest) -> Result<LaunchedProcess, SandboxError> {
        Err(SandboxError::exec(format!(
            "the kubernetes sandbox backend is a skeleton: commands cannot be streamed into pod \
             {} yet; use the docker, local or ssh backend",
            self.pod
        )))
    }
}

#[async_trait::async_trait]
impl SandboxHandle for KubernetesSandbox {
    fn backend_id(&self) -> &str {
        crate::backend::KUBERNETES_BACKEND_ID
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn workdir(&self) -> &str {
        &self.workdir
    }

    fn capabilities(&self) -> &[String] {
        &[]
    }

    fn launcher(&self) -> Arc<dyn ProcessLauncher> {
        Arc::clone(&self.launcher) as Arc<dyn ProcessLauncher>
    }

    fn fs_bridge(&self) -> Option<Arc<dyn FsBridge>> {
        None
    }

    async fn run_script(
        &self,
        script: &str,
        args: &[String],
        stdin: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<ScriptOutput, SandboxError> {
        let argv = script_argv(script, args);
        let out = self
            .api
            .exec(&self.namespace, &self.pod, &argv, stdin, timeout)
            .await
            .map_err(KubernetesError::from)?;
        Ok(ScriptOutput {
            stdout: out.stdout,
            stderr: out.stderr,
            status: out.status,
        })
    }
}
