mod common;
mod escape;
mod landlock;
mod limits;
mod local;
