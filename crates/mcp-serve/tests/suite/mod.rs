mod python_client;
mod rust_client;
mod support;
