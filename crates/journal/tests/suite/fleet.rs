//! PostgreSQL only: several gateways on one database, and the database
//! lost mid-run.
