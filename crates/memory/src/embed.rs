//! Embedding providers: off by default. With one configured, chunks get a
//! vector when they are indexed and a search mixes cosine similarity into
//! the BM25 ranking (hybrid). A provider that fails never fails a search:
//! the text ranking answers and the result says why it fell back.

use crate::error::Result;
#[cfg(feature = "openai")]
use crate::error::{MemoryError, MemoryErrorKind};

/// Turns texts into vectors.
#[async_trait::async_trait]
pub trait EmbeddingProvider: Send + Sync + std::fmt::Debug {
    /// The provider id shown in results (`openai`).
    fn id(&self) -> &str;
    /// The model name (stored with the vectors: a model change re-embeds).
    fn model(&self) -> &str;
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// Cosine similarity of two vectors (0 when either is empty or their
/// lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// A vector as stored (little-endian `f32`s).
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector back.
pub(crate) fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The default model of the OpenAI-compatible provider.
pub const DEFAULT_OPENAI_MODEL: &str = "text-embedding-3-small";
/// The default base URL of the OpenAI-compatible provider.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// An OpenAI-compatible `POST <baseUrl>/embeddings` client. It connects
/// only through `talon-egress`'s guarded client: the endpoint's addresses
/// are vetted (a loopback or private endpoint needs
/// `remote.allowPrivateNetwork: true`; a cloud metadata endpoint is always
/// refused), no proxy, no redirects.
#[cfg(feature = "openai")]
#[derive(Debug, Clone)]
pub struct OpenAiEmbeddings {
    client: talon_egress::GuardedClient,
    url: url::Url,
    model: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    timeout: std::time::Duration,
    /// Whether this is OpenAI's own API (which needs a key).
    default_endpoint: bool,
}

#[cfg(feature = "openai")]
impl OpenAiEmbeddings {
    /// The client for `remote` (`baseUrl`, `apiKey`, `headers`,
    /// `allowPrivateNetwork`) and `model`.
    pub fn new(
        remote: &talon_config::sections::memory::MemoryRemoteConfig,
        model: Option<&str>,
    ) -> Result<Self> {
        use std::sync::Arc;
        let base = remote
            .base_url
            .as_deref()
            .unwrap_or(DEFAULT_OPENAI_BASE_URL)
            .trim_end_matches('/');
        let url = url::Url::parse(&format!("{base}/embeddings")).map_err(|e| {
            MemoryError::new(
                MemoryErrorKind::Config,
                format!("agents.defaults.memorySearch.remote.baseUrl: `{base}` is not a URL: {e}"),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(MemoryError::new(
                MemoryErrorKind::Config,
                format!(
                    "agents.defaults.memorySearch.remote.baseUrl: `{base}` must be an http or https URL"
                ),
            ));
        }
        let policy = talon_egress::SsrfPolicy::strict()
            .with_private_network(remote.allow_private_network == Some(true));
        let guard = talon_egress::EgressGuard::new(
            Arc::new(policy),
            Arc::new(talon_egress::SystemResolver),
        )
        .with_opt_in("agents.defaults.memorySearch.remote.allowPrivateNetwork: true");
        let client = guard
            .http_client(talon_egress::HttpOptions::default())
            .map_err(|e| {
                MemoryError::new(
                    MemoryErrorKind::Embedding,
                    format!("the embedding HTTP client cannot be built: {e}"),
                )
            })?;
        Ok(OpenAiEmbeddings {
            client,
            url,
            model: model.unwrap_or(DEFAULT_OPENAI_MODEL).to_owned(),
            api_key: remote
                .api_key
                .clone()
                // The environment's key goes only to OpenAI's own API,
                // never to a configured endpoint.
                .or_else(|| {
                    remote
                        .base_url
                        .is_none()
                        .then(|| std::env::var("OPENAI_API_KEY").ok())
                        .flatten()
                })
                .filter(|k| !k.trim().is_empty()),
            default_endpoint: remote.base_url.is_none(),
            headers: remote
                .headers
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            timeout: std::time::Duration::from_secs(30),
        })
    }

    /// The endpoint posted to.
    pub fn url(&self) -> &url::Url {
        &self.url
    }
}

#[cfg(feature = "openai")]
#[async_trait::async_trait]
impl EmbeddingProvider for OpenAiEmbeddings {
    fn id(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let fail = |m: String| MemoryError::new(MemoryErrorKind::Embedding, m);
        if self.default_endpoint && self.api_key.is_none() {
            // Nothing is sent without a key to OpenAI's own API.
            return Err(fail(
                "no API key for the embedding provider: set agents.defaults.memorySearch.remote.apiKey or OPENAI_API_KEY"
                    .into(),
            ));
        }
        let body = serde_json::json!({ "model": self.model, "input": texts });
        let mut req = self
            .client
            .post(self.url.clone())
            .map_err(|b| fail(format!("embedding endpoint {}: {b}", self.url)))?
            .header("content-type", "application/json")
            .timeout(self.timeout)
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req.send().await.map_err(|e| {
            let why = talon_egress::blocked_in(&e)
                .map(|b| b.to_string())
                .unwrap_or_else(|| e.to_string());
            fail(format!("embedding endpoint {}: {why}", self.url))
        })?;
        let status = resp.status();
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| fail(format!("embedding endpoint {}: {e}", self.url)))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
            return Err(fail(format!(
                "embedding endpoint {} answered HTTP {status}: {text}",
                self.url
            )));
        }
        parse_embeddings(&bytes, texts.len())
            .map_err(|e| fail(format!("embedding endpoint {}: {}", self.url, e.message())))
    }
}

/// The vectors of an OpenAI `/embeddings` answer, ordered by `index`.
pub fn parse_embeddings(bytes: &[u8], expected: usize) -> Result<Vec<Vec<f32>>> {
    let bad =
        |m: String| crate::error::MemoryError::new(crate::error::MemoryErrorKind::Embedding, m);
    #[derive(serde::Deserialize)]
    struct Item {
        #[serde(default)]
        index: Option<usize>,
        embedding: Vec<f32>,
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Vec<Item>,
    }
    let answer: Answer = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("the answer is not an embeddings list: {e}")))?;
    if answer.data.len() != expected {
        return Err(bad(format!(
            "asked for {expected} vectors, got {}",
            answer.data.len()
        )));
    }
    let mut out = vec![Vec::new(); expected];
    for (i, item) in answer.data.into_iter().enumerate() {
        let at = item.index.unwrap_or(i);
        let Some(slot) = out.get_mut(at) else {
            return Err(bad(format!("vector index {at} out of range")));
        };
        *slot = item.embedding;
    }
    if out.iter().any(Vec::is_empty) {
        return Err(bad("an answer vector is missing or empty".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_cosine_is_sane() {
        let v = vec![0.5f32, -1.0, 2.25];
        assert_eq!(from_blob(&to_blob(&v)), v);
        assert!((cosine(&v, &v) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&v, &[1.0]), 0.0);
    }

    #[test]
    fn answers_are_ordered_by_index_and_checked() {
        let body = br#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert_eq!(
            parse_embeddings(body, 2).ok(),
            Some(vec![vec![1.0], vec![2.0]])
        );
        assert!(parse_embeddings(body, 3).is_err());
        assert!(parse_embeddings(b"{}", 1).is_err());
    }
}
