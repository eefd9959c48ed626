//! The normalisation pipeline.

use serde_json::Value;

use crate::dialect::Dialect;
use crate::gemini::clean_for_gemini;
use crate::openai::apply_strict;
use crate::openapi::add_missing_items;
use crate::openapi::clean_openapi;
use crate::openapi::omit_empty_items;
use crate::refs::drop_unused_definitions;
use crate::refs::inline_refs;
use crate::top_level::ensure_object;
use crate::top_level::fix_top_level;
use crate::walk::strip_keywords;
use crate::walk::truncate;

use crate::dialect::XAI_STRIPPED_KEYWORDS;

/// Per-model compatibility switches on top of the dialect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NormalizeOptions {
    /// Extra keywords to strip from every subschema (OpenClaw's compat
    /// `unsupportedToolSchemaKeywords`). Applied after the dialect's own
    /// stripping. Names are trimmed; empty names are ignored. The root's
    /// `type` and `properties` are restored even if listed here.
    pub unsupported_keywords: Vec<String>,
    /// Remove `items: {}` from array schemas (OpenClaw's compat
    /// `omitEmptyArrayItems`), for providers that reject it.
    pub omit_empty_array_items: bool,
}

/// The result of [`normalize_schema`].
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The schema to send to the provider. Its root is always
    /// `type: "object"` with a `properties` map.
    pub schema: Value,
    /// Whether the schema requires no property, so absent or `null`
    /// arguments should be read as `{}`. Pass it to
    /// [`decode_arguments`](crate::decode_arguments).
    pub empty_object_args: bool,
}

/// Turns one tool's parameter schema into what `dialect` accepts.
///
/// The steps, in order:
/// 1. local `$ref`s are inlined (cycles and anything past the depth or
///    size budget become `{}`; external references are dropped, never
///    fetched);
/// 2. OpenAPI keywords are rewritten (`nullable: true` becomes a `null`
///    type, enum value or `anyOf` variant; `example`, `xml`, … go);
/// 3. the root is forced into one object schema (unions flattened, see the
///    crate docs);
/// 4. the dialect's own rules;
/// 5. array schemas without `items` get `items: {}`, or lose an empty
///    `items` when [`NormalizeOptions::omit_empty_array_items`] is set;
/// 6. [`NormalizeOptions::unsupported_keywords`] are stripped;
/// 7. subschemas nested 64 or more levels deep become `{}`, `$defs`,
///    `definitions` and `components` are dropped unless a local `$ref` is
///    still unresolved, and the root is checked to still be an object.
///
/// The function never panics and is idempotent: normalising its output
/// again with the same dialect and options changes nothing.
pub fn normalize_schema(schema: &Value, dialect: Dialect, opts: &NormalizeOptions) -> Normalized {
    let mut out = inline_refs(schema);
    clean_openapi(&mut out, 0);
    let mut out = fix_top_level(out);

    match dialect {
        Dialect::Gemini => clean_for_gemini(&mut out, 0),
        Dialect::Xai => strip_keywords(&mut out, XAI_STRIPPED_KEYWORDS, 0),
        Dialect::OpenAiStrict => apply_strict(&mut out),
        Dialect::OpenAi | Dialect::Anthropic | Dialect::Permissive => {}
    }

    if opts.omit_empty_array_items {
        omit_empty_items(&mut out, 0);
    } else {
        add_missing_items(&mut out, 0);
    }

    let extra: Vec<&str> = opts
        .unsupported_keywords
        .iter()
        .map(|k| k.trim())
        .filter(|k| !k.is_empty())
        .collect();
    strip_keywords(&mut out, &extra, 0);

    truncate(&mut out, 0);
    // After truncation, which can cut away the last unresolved reference.
    drop_unused_definitions(&mut out);
    if opts.omit_empty_array_items {
        // Truncation can leave `items: {}` behind.
        omit_empty_items(&mut out, 0);
    }
    if let Value::Object(root) = &mut out {
        ensure_object(root);
    }

    let empty_object_args = match out.get("required") {
        Some(Value::Array(required)) => required.is_empty(),
        _ => true,
    };
    Normalized {
        schema: out,
        empty_object_args,
    }
}

#[cfg(test)]
#[path = "normalize_tests.rs"]
mod tests;
