-- The SQL reference (echo_duck/store/docs.py, `echo-duck docs sql`): the store's own catalog, read back.
-- Only the store's catalog (current_database()) and schema main; DuckDB's internal objects are left out,
-- and so is any object whose name starts with an underscore: the marker for an internal helper that
-- needs no documentation (none exist today; tests/test_docs.py requires a comment on everything else).

-- Tables with their COMMENT ON text.
-- name: docs_tables
SELECT table_name AS name, comment
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal AND NOT temporary
  AND NOT starts_with(table_name, '_')
ORDER BY table_name;

-- Views with their COMMENT ON text and definition (to see which macros and functions they call).
-- name: docs_views
SELECT view_name AS name, comment, sql AS definition
FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal AND NOT temporary
  AND NOT starts_with(view_name, '_')
ORDER BY view_name;

-- Columns of tables and views, in order. memories_all (recreated by archive.py on every writable
-- open, so it cannot keep column comments) is memories plus `storage`: its columns borrow the
-- comments of memories.
-- name: docs_columns
SELECT c.table_name AS relation, c.column_name AS name, c.data_type AS type,
       coalesce(c.comment, m.comment,
                CASE WHEN c.table_name = 'memories_all' AND c.column_name = 'storage'
                     THEN 'live (in the memories table) | archive (in the Parquet archive)' END) AS comment
FROM duckdb_columns() c
LEFT JOIN duckdb_columns() m
       ON c.table_name = 'memories_all' AND m.database_name = c.database_name AND m.schema_name = 'main'
      AND m.table_name = 'memories' AND m.column_name = c.column_name
WHERE c.database_name = current_database() AND c.schema_name = 'main' AND NOT starts_with(c.table_name, '_')
ORDER BY c.table_name, c.column_index;

-- Macros (scalar and table) with their parameters, COMMENT ON text and definition. DuckDB 1.5.5 does
-- not expose parameter defaults here (rrf(rnk, k := 60) lists rnk, k): comments mention them.
-- name: docs_macros
SELECT function_name AS name, function_type AS kind, parameters, comment, macro_definition AS definition
FROM duckdb_functions()
WHERE database_name = current_database() AND schema_name = 'main'
  AND function_type IN ('macro', 'table_macro') AND NOT internal AND NOT starts_with(function_name, '_')
ORDER BY function_name, len(parameters);

-- Every function name this connection knows: compared before and after loading an extension, it
-- tells which functions the extension adds.
-- name: docs_function_names
SELECT DISTINCT function_name FROM duckdb_functions() ORDER BY function_name;

-- name: docs_schema_version
SELECT max(version) FROM schema_version;

-- LOAD takes no bound parameters: {extension_file} is replaced by a quoted path literal
-- (extensions.quote_literal) of a binary from a duckdb-extension-* wheel.
-- name: load_extension_file
LOAD {extension_file};
