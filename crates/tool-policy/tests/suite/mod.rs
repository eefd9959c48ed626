mod caps;
mod properties;
