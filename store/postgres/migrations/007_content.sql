-- 007: bodies stored once by content. A version's edition is an index, kept
-- in parts of at most 16 MiB, that names segments of bodies; a segment is
-- kept as chunks of at most 16 MiB, shared by every version that names it,
-- and snapshot files are kept once each, gzipped, by the sha256 of their
-- bytes. No value is larger than a chunk. Versions stored before keep their
-- files (refdata_files) and pack (refdata_extras) until they are pruned.
CREATE TABLE refdata_segments (
    sha256 text NOT NULL,
    chunk  int NOT NULL,
    body   bytea NOT NULL,
    PRIMARY KEY (sha256, chunk)
);
ALTER TABLE refdata_segments ALTER COLUMN body SET STORAGE EXTERNAL;

CREATE TABLE refdata_index_parts (
    manifest_id text NOT NULL REFERENCES refdata_versions ON DELETE CASCADE,
    part        int NOT NULL,
    body        bytea NOT NULL,
    PRIMARY KEY (manifest_id, part)
);
ALTER TABLE refdata_index_parts ALTER COLUMN body SET STORAGE EXTERNAL;

CREATE TABLE refdata_contents (
    sha256 text NOT NULL,
    chunk  int NOT NULL,
    body   bytea NOT NULL,
    PRIMARY KEY (sha256, chunk)
);
ALTER TABLE refdata_contents ALTER COLUMN body SET STORAGE EXTERNAL;
