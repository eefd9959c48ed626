mod binds;
mod common;
mod egress;
mod escape;
mod landlock;
mod limits;
mod local;
