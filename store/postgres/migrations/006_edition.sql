-- 006: an import keeps one thing with a version for the servers, its edition
-- pack (every body rendered and compressed); the brotli and parts of 004 and
-- 005 are gone. Packs are mostly compressed bytes, so PostgreSQL does not try
-- to compress them again.
DELETE FROM refdata_extras;
ALTER TABLE refdata_extras DROP CONSTRAINT refdata_extras_kind_check;
ALTER TABLE refdata_extras ADD CONSTRAINT refdata_extras_kind_check CHECK (kind IN ('edition'));
ALTER TABLE refdata_extras ALTER COLUMN body SET STORAGE EXTERNAL;
