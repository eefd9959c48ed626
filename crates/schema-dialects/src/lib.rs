//! Provider dialects for tool parameter schemas, and tolerant decoding of
//! tool-call arguments.
//!
//! A Talon tool describes its parameters with one JSON Schema. Model
//! providers each accept a different subset of JSON Schema, so before a
//! tool is offered to a model its schema goes through
//! [`normalize_schema`] for that provider's [`Dialect`]. When the model
//! calls the tool, [`decode_arguments`] or [`decode_arguments_str`] turn
//! what it sent into a map of named arguments.
//!
//! # Brief overview
//!
//! - [`Dialect`] names a provider's flavour; [`dialect_for`] picks one from
//!   a provider id and model id the way OpenClaw does.
//! - [`normalize_schema`] returns a [`Normalized`]: the schema to send and
//!   `empty_object_args`, which says whether absent arguments mean `{}`.
//!   [`NormalizeOptions`] carries per-model compat switches.
//! - [`openai_strict_compatible`] says whether a schema may be sent with
//!   OpenAI's `strict: true`.
//! - [`decode_arguments`] and [`decode_arguments_str`] return the
//!   arguments object or an [`ArgumentError`] written for the model.
//!
//! ```
//! use serde_json::json;
//! use talon_schema_dialects::{NormalizeOptions, decode_arguments_str, dialect_for, normalize_schema};
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string", "minLength": 1},
//!         "mode": {"anyOf": [{"const": "read"}, {"const": "write"}, {"type": "null"}]}
//!     },
//!     "required": ["path"]
//! });
//! let dialect = dialect_for("google", Some("gemini-2.5-pro"));
//! let normalized = normalize_schema(&schema, dialect, &NormalizeOptions::default());
//! assert_eq!(normalized.schema, json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string"},
//!         "mode": {"type": "string", "enum": ["read", "write"]}
//!     },
//!     "required": ["path"]
//! }));
//! assert!(!normalized.empty_object_args);
//!
//! let args = decode_arguments_str(r#" {"path": "README.md"} "#, normalized.empty_object_args)?;
//! assert_eq!(args["path"], "README.md");
//! assert!(decode_arguments_str("", normalized.empty_object_args).is_err());
//! # Ok::<(), talon_schema_dialects::ArgumentError>(())
//! ```
//!
//! # The generic pass
//!
//! Every dialect, [`Dialect::Permissive`] included, starts with the same
//! normalisation (OpenClaw's "always" rules):
//!
//! - **Local `$ref`s are inlined**: `#/$defs/…`, `#/definitions/…` (looked
//!   up in the enclosing `$defs` scopes first) and any other JSON pointer
//!   into the document (`~0`/`~1` unescaped). The reference site's
//!   `title`, `description`, `default` and `nullable: true` are copied onto
//!   the inlined copy. A reference met again while it is being expanded is
//!   a cycle and becomes `{}`. `$defs`, `definitions` and `components` are
//!   dropped unless some local reference could not be resolved.
//! - **External references are never fetched.** A `$ref` that is not a
//!   local pointer (`https://…`, `other.json#/x`, `#anchor`) is removed and
//!   its sibling keywords kept, so `{"$ref": "https://…"}` becomes `{}`.
//! - **OpenAPI keywords**: `nullable: true` adds `"null"` to `type`, adds
//!   `null` to `enum`, or (on an `anyOf`/`oneOf`/`allOf` schema) wraps the
//!   schema as `anyOf: [schema, {"type": "null"}]` with the annotations
//!   moved onto the wrapper. `nullable`, `discriminator`, `externalDocs`,
//!   `readOnly`, `writeOnly`, `xml` and `example` are removed.
//! - **Array schemas without `items`** get `items: {}`
//!   (removed instead with [`NormalizeOptions::omit_empty_array_items`]).
//! - **The root is always `type: "object"` with a `properties` map**, for
//!   every dialect. A root `anyOf`/`oneOf` is flattened into one object:
//!   the base and variant properties are merged (first wins, except that
//!   two literal sets such as `const: "a"` and `const: "b"` merge into one
//!   `enum`, typed when every value has the same JSON type); `required` is
//!   the root's own list if it has one, otherwise the keys every object
//!   variant requires. No `additionalProperties: false` is added: the
//!   flattened object stays open, as in OpenClaw. A root `allOf` is kept.
//!   A root that is not an object schema at all (`{"type": "string"}`,
//!   `true`, a number) cannot describe named arguments, so it is replaced
//!   by an empty object schema; its `title` and `description` survive and
//!   keywords that only constrain non-objects (`items`, `enum`,
//!   `minLength`, …) are dropped from the root.
//!
//! # Dialect rules
//!
//! - [`Dialect::Gemini`] strips [`Dialect::stripped_keywords`] everywhere,
//!   turns `const` into a one-value `enum`, stringifies enum values (other
//!   than strings, numbers and booleans, they are dropped), filters
//!   `required` to existing properties, drops `"null"` from type arrays and
//!   removes every `anyOf`/`oneOf`: null variants go, all-literal unions
//!   become `{type, enum}`, a single remaining variant is inlined, and
//!   anything else falls back to one representative `type`.
//! - [`Dialect::Xai`] strips `minContains` and `maxContains`.
//! - [`Dialect::OpenAiStrict`] adds `required: []` to empty-property
//!   objects and `additionalProperties: false` to the root when absent.
//! - [`Dialect::OpenAi`], [`Dialect::Anthropic`] and
//!   [`Dialect::Permissive`] get the generic pass only.
//!
//! # Hostile input
//!
//! Normalisation never panics. Subschemas 64 or more levels deep (a
//! `$ref` hop counts as a level) become `{}`, and once 20 000 nodes have
//! been copied out of reference targets further references become `{}`,
//! so a schema whose definitions reference each other exponentially stays
//! small. Values in schema positions that are not schemas are left alone
//! (Gemini replaces them with `{}`). Output is idempotent: normalising it
//! again changes nothing, with one known gap: a local reference that
//! cannot be resolved in the input but points at something the
//! normalisation itself creates (such as `#/properties/x/items` on an
//! array without `items`) is resolved on a second pass.
//!
//! # Argument decoding, and where Talon differs from OpenClaw
//!
//! OpenClaw's `coerceParamsRecord` accepts an object, or a string holding
//! a JSON object, and silently turns anything else into `{}`. Talon
//! returns an [`ArgumentError`] instead. A silent `{}` turns a malformed
//! call into a different call: a `write` whose arguments arrived as an
//! array would run with no path and no content, and the model would never
//! learn that its call was garbled. The error names what arrived (type
//! and an 80-character preview) and what was expected, so the model can
//! retry. Absent arguments (`null`, empty text) still become `{}` when the
//! schema requires nothing ([`Normalized::empty_object_args`]), which is
//! what OpenClaw's argument preparer does for such tools.
//!
//! # What this crate does NOT do
//!
//! It does not validate arguments against the schema, fetch remote
//! `$ref`s, make an arbitrary schema OpenAI-strict-compatible (it only
//! checks, with [`openai_strict_compatible`]), cache results (normalising
//! is cheap and callers can memoise), know the tool catalog, or talk to
//! any provider. It is pure: no I/O, no async runtime.

#![deny(missing_docs)]

pub use crate::arguments::ArgumentError;
pub use crate::arguments::decode_arguments;
pub use crate::arguments::decode_arguments_str;
pub use crate::dialect::Dialect;
pub use crate::dialect::dialect_for;
pub use crate::error::Error;
pub use crate::error::Result;
pub use crate::normalize::NormalizeOptions;
pub use crate::normalize::Normalized;
pub use crate::normalize::normalize_schema;
pub use crate::openai::openai_strict_compatible;

mod arguments;
mod dialect;
mod error;
mod gemini;
mod normalize;
mod openai;
mod openapi;
mod refs;
mod top_level;
mod walk;
