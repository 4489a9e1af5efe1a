-- dynastore's PostgreSQL schema, version 1. Applied by dynastore itself
-- (storage/postgres/schema.py) inside one transaction, under an advisory
-- lock, so two servers starting on an empty database never both apply it.

-- The catalogue: DynamoDB tables and dynastore's own storage tables (index
-- entries, stream records, queues). ``generation`` grows with every change
-- of a row, so a server can tell that its cached copy is stale.
CREATE TABLE dynastore_tables (
    table_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text   NOT NULL,
    metadata   bytea  NOT NULL,
    generation bigint NOT NULL DEFAULT 1
);

-- Every item of every storage table. The key is the distribution key
-- family of docs/postgres.md: (table_id, pk_hash, pk, sk), pk_hash the
-- 32-bit hash of pk that Scan segments split; bytea compares as unsigned
-- bytes, the order the key encoding needs.
CREATE TABLE dynastore_items (
    table_id bigint  NOT NULL,
    pk_hash  bigint  NOT NULL,
    pk       bytea   NOT NULL,
    sk       bytea   NOT NULL,
    item     bytea   NOT NULL,
    size     integer NOT NULL,
    PRIMARY KEY (table_id, pk_hash, pk, sk)
);
