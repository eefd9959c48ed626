mod schema;
