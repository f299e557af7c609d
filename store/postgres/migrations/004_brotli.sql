-- 004: the brotli an import made of the bodies a version adds, so replicas that
-- swap to it install it instead of compressing; it goes with its version.
CREATE TABLE refdata_brotli (
    manifest_id text PRIMARY KEY REFERENCES refdata_versions ON DELETE CASCADE,
    sha256      text NOT NULL,
    body        bytea NOT NULL
);
