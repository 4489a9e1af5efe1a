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

-- One number for the whole catalogue, raised (and announced with NOTIFY
-- dynastore_catalogue) by every change of dynastore_tables, in the same
-- transaction: a server compares it with the one it loaded to tell
-- whether its copy of the catalogue is current (docs/postgres.md).
CREATE TABLE dynastore_catalogue (version bigint NOT NULL);
INSERT INTO dynastore_catalogue VALUES (1);

-- Every item of every storage table. The key is the distribution key
-- family of docs/postgres.md: (table_id, pk_hash, pk, sk), pk_hash the
-- 32-bit hash of pk that Scan segments split; bytea compares as unsigned
-- bytes, the order the key encoding needs. A row's version, for the
-- conditional commits of the write path, is its xmin. ``by_transaction``
-- says who wrote it last: DynamoDB answers a write that lost its row to a
-- TransactWriteItems differently from one that lost it to a plain write.
CREATE TABLE dynastore_items (
    table_id       bigint  NOT NULL,
    pk_hash        bigint  NOT NULL,
    pk             bytea   NOT NULL,
    sk             bytea   NOT NULL,
    item           bytea   NOT NULL,
    size           integer NOT NULL,
    by_transaction boolean NOT NULL DEFAULT false,
    PRIMARY KEY (table_id, pk_hash, pk, sk)
);

-- A conditional commit's expectation: exactly one row was changed (or
-- checked). Anything else aborts the commit with SQLSTATE DSC01, naming
-- the change, so the server can read again and retry (write_path.py).
CREATE FUNCTION dynastore_expect(touched bigint, change_position integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF touched <> 1 THEN
        RAISE EXCEPTION 'dynastore: write conflict at change %', change_position
            USING ERRCODE = 'DSC01', DETAIL = change_position::text;
    END IF;
END
$$;

-- Every commit first checks each table it writes: a shared advisory lock
-- per table (catalogue changes take it exclusively, so they wait for the
-- commits in flight and the commits after them wait for the change), then
-- the table's generation. A commit computed from an older definition (an
-- index added by another server) aborts with SQLSTATE DSC02.
CREATE FUNCTION dynastore_check_table(checked_table bigint, expected_generation bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    current_generation bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1685679713, (checked_table % 2147483647)::integer);
    SELECT generation INTO current_generation FROM dynastore_tables WHERE table_id = checked_table;
    IF current_generation IS DISTINCT FROM expected_generation THEN
        RAISE EXCEPTION 'dynastore: table % changed (generation %, expected %)',
            checked_table, current_generation, expected_generation
            USING ERRCODE = 'DSC02';
    END IF;
END
$$;
