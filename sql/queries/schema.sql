-- Bookkeeping of the schema: which numbered migrations ran, and which version of the macro/view
-- files is installed. Used only by echo_duck/storage/schema.py.

-- name: create_schema_version
CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    checksum   VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
);

-- name: create_schema_objects
CREATE TABLE IF NOT EXISTS schema_objects (
    checksum   VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
);

-- name: user_table_count
SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND NOT internal;

-- name: has_schema_version
SELECT count(*) FROM duckdb_tables()
WHERE database_name = current_database() AND table_name = 'schema_version';

-- name: applied_migrations
SELECT version, name, checksum FROM schema_version ORDER BY version;

-- name: record_migration
INSERT INTO schema_version VALUES ($version, $name, $checksum, now()::TIMESTAMP);

-- name: installed_objects_checksum
SELECT max_by(checksum, applied_at) FROM schema_objects;

-- name: record_objects_checksum
INSERT INTO schema_objects VALUES ($checksum, now()::TIMESTAMP);

-- name: objects_catalog
-- The store's macros and views in its main schema (the one on the search path) as the catalog holds them, (kind,
-- name, definition as DuckDB prints it):
-- storage/catalog.py compares echo_duck's own with an empty store's, so a macro or view replaced in the file (a
-- plain-SQL session's CREATE OR REPLACE MACRO) is seen on the next open and by doctor.
SELECT 'f', function_name, concat_ws(':', function_type, parameters::VARCHAR, coalesce(macro_definition, ''))
FROM duckdb_functions()
WHERE database_name = current_database() AND schema_name = 'main' AND function_type IN ('macro', 'table_macro')
UNION ALL
SELECT 'v', view_name, sql FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
  AND view_name <> 'memories_all';  -- lifecycle/archive.py's, rebuilt with the archive's files (its own stamp)

-- name: catalog_system_functions
-- The names of DuckDB's functions (built in and the loaded extensions'): a store macro of one of these names
-- shadows it (storage/catalog.py).
SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE database_name = 'system';

-- name: catalog_main_tables
-- The tables of the store's main schema, lower case: a table under the name of one of echo_duck's views keeps the
-- view from being installed (storage/catalog.py squatted()).
SELECT lower(table_name) FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main';

-- name: date_new_schema
-- A new store made from the process's empty-store template (storage/template.py): its schema was applied now.
UPDATE schema_version SET applied_at = now()::TIMESTAMP;
UPDATE schema_objects SET applied_at = now()::TIMESTAMP;
