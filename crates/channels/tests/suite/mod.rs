mod irc;
mod tool;
mod webhook;
