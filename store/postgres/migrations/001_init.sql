-- 001: versions with their files and checksums, diffs, the active pointer.
-- Every table lives in the connection's current schema (search_path), so one
-- database can hold several independent stores.
CREATE TABLE refdata_versions (
    manifest_id     text PRIMARY KEY,
    seq             bigint NOT NULL UNIQUE,
    version         text NOT NULL,
    branch          text NOT NULL,
    published_at    timestamptz NOT NULL,
    manifest        bytea NOT NULL,  -- the manifest JSON: every file's sha256
    manifest_sha256 text NOT NULL    -- chains the active pointer to every file
);

CREATE TABLE refdata_files (
    manifest_id text NOT NULL REFERENCES refdata_versions ON DELETE CASCADE,
    name        text NOT NULL,
    sha256      text NOT NULL,
    body        bytea NOT NULL,
    PRIMARY KEY (manifest_id, name)
);

CREATE TABLE refdata_diffs (
    from_id text NOT NULL,
    to_id   text NOT NULL,
    sha256  text NOT NULL,
    body    bytea NOT NULL,
    PRIMARY KEY (from_id, to_id)
);

CREATE TABLE refdata_active (
    one             boolean PRIMARY KEY DEFAULT true CHECK (one),
    manifest_id     text NOT NULL REFERENCES refdata_versions,
    previous        text NOT NULL DEFAULT '',
    manifest_sha256 text NOT NULL,
    published_at    timestamptz NOT NULL,
    revision        bigint NOT NULL
);
