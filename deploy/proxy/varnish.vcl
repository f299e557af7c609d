vcl 4.1;
# Varnish (Debian's varnish) as a caching proxy in front of two refdata replicas.
# Run it with Varnish's own gzip handling off, so the bodies (and their ETags)
# refdata rendered pass through unchanged:
#   varnishd -a :80 -f /etc/refdata/varnish.vcl -p http_gzip_support=off -s malloc,1g
# tools/proxy.sh starts it with the ports below replaced (docs/operations.md,
# "A caching proxy in front").
#
# What it caches follows the origin's Cache-Control (Varnish's built-in rules):
#   /v1/versions/{manifestId}/…  public, max-age=31536000, immutable: kept a year.
#     A publish never changes a pinned URL, so nothing needs purging.
#   current routes (/v1/weapons…)  max-age and stale-while-revalidate (grace)
#     from the replicas' poll interval: they expire by themselves.
#   /v1/version, /v1/versions, /v1/diff/latest  no-cache: passed to a replica,
#     which answers 304 to a matching If-None-Match.
#   /v1/version?wait=…, /v1/version/stream  passed, streamed, with long timeouts.
#   errors  never stored.
# PURGE from the addresses in the purge ACL drops one URL in every encoding.

import directors;

# A replica is used while GET /readyz answers 200: 503 while it loads or has no
# version, so requests go to the other one.
probe readyz {
    .url = "/readyz";
    .interval = 1s;
    .timeout = 1s;
    .window = 3;
    .threshold = 2;
    .initial = 2;
}

backend replica1 {
    .host = "127.0.0.1";
    .port = "8081";
    .probe = readyz;
    .connect_timeout = 2s;
}

backend replica2 {
    .host = "127.0.0.1";
    .port = "8082";
    .probe = readyz;
    .connect_timeout = 2s;
}

acl purge {
    "127.0.0.1";
    "::1";
}

sub vcl_init {
    new replicas = directors.round_robin();
    replicas.add_backend(replica1);
    replicas.add_backend(replica2);
}

sub vcl_recv {
    set req.backend_hint = replicas.backend();
    if (req.method == "PURGE") {
        if (!client.ip ~ purge) {
            return (synth(405, "Not allowed"));
        }
        return (purge);
    }
    # One cached object per URL and encoding: Accept-Encoding becomes the one
    # coding refdata will pick (br, else gzip, else none; q=0 refuses), and the
    # origin's Vary: Accept-Encoding then splits the object by that value.
    if (req.http.Accept-Encoding ~ "(?i)(^|,)\s*br\s*(;\s*q\s*=\s*(1(\.0*)?|0?\.\d*[1-9]\d*)\s*)?(,|$)") {
        set req.http.Accept-Encoding = "br";
    } elsif (req.http.Accept-Encoding ~ "(?i)(^|,)\s*gzip\s*(;\s*q\s*=\s*(1(\.0*)?|0?\.\d*[1-9]\d*)\s*)?(,|$)") {
        set req.http.Accept-Encoding = "gzip";
    } else {
        unset req.http.Accept-Encoding;
    }
    # The change signal (and its long poll, and its event stream) is answered by
    # a replica every time.
    if (req.url ~ "^/v1/version(\?|/stream|$)") {
        return (pass);
    }
}

sub vcl_backend_fetch {
    # A long poll holds a request up to 120 s; the stream sends a comment every
    # 25 s and is ended by the replica after 15 minutes (or by Varnish's
    # send_timeout, 600 s: the client reconnects with Last-Event-ID either way).
    if (bereq.url ~ "^/v1/version\?(.*&)?wait=") {
        set bereq.first_byte_timeout = 150s;
    } elsif (bereq.url ~ "^/v1/version/stream") {
        set bereq.first_byte_timeout = 150s;
        set bereq.between_bytes_timeout = 150s;
    }
}

sub vcl_backend_response {
    # A replica that is not ready (503) gets the request tried on the other.
    if (beresp.status == 503 && bereq.retries == 0 && bereq.method == "GET") {
        return (retry);
    }
    if (bereq.url ~ "^/v1/version/stream") {
        set beresp.do_stream = true;
        set beresp.uncacheable = true;
        return (deliver);
    }
    # Errors are not stored, whatever their Cache-Control.
    if (beresp.status >= 400) {
        set beresp.ttl = 1s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    # stale-while-revalidate becomes grace (Varnish reads it itself); an
    # expired object is kept a while longer so its refetch can be conditional
    # (If-None-Match with the stored ETag; a 304 keeps the body).
    set beresp.keep = 1h;
}

sub vcl_backend_error {
    # A refused connection or a timeout: try the other replica once.
    if (bereq.retries == 0) {
        return (retry);
    }
}

sub vcl_deliver {
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}
