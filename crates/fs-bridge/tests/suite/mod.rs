mod bounds;
mod common;
mod escapes;
mod mounts;
mod normalize;
mod operations;
mod race;
