-- 005: what an import keeps with a version for the servers that swap to it,
-- by kind: 'brotli' (the brotli of the bodies it adds, 004's table) and
-- 'part' (the part built after the version before it). Each goes with its
-- version.
CREATE TABLE refdata_extras (
    manifest_id text NOT NULL REFERENCES refdata_versions ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('brotli', 'part')),
    sha256      text NOT NULL,
    body        bytea NOT NULL,
    PRIMARY KEY (manifest_id, kind)
);
INSERT INTO refdata_extras (manifest_id, kind, sha256, body)
    SELECT manifest_id, 'brotli', sha256, body FROM refdata_brotli;
DROP TABLE refdata_brotli;
