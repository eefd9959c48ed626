mod exec;
mod files;
mod web;
