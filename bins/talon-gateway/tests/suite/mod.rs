mod e2e_api;
mod e2e_containment;
mod e2e_docker;
mod e2e_faults;
mod e2e_lifecycle;
mod e2e_mcp;
mod support;
mod wire_shapes;
